import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { isGuid } from '@byrd/contracts';
import { ApiError } from '@byrd/platform';
import { Transaction } from '../transactions/transaction.entity.js';
import { CompleteAuthentication } from './complete-authentication.usecase.js';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';

export interface SessionWithPayment {
  session: ThreeDSSession;
  transaction: Transaction;
}

/**
 * Reads a 3DS session for the browser (its unguessable id is the only credential there is), with the
 * payment it authenticates. A challenge left past its deadline is ended as expired on the spot, so
 * the shopper and the SDK never wait for the sweep.
 */
@Injectable()
export class AuthenticationSessions {
  constructor(
    private readonly dataSource: DataSource,
    private readonly complete: CompleteAuthentication,
  ) {}

  async current(id: string): Promise<SessionWithPayment> {
    if (!isGuid(id)) throw ApiError.notFound(`3DS authentication ${String(id)}`);
    const session = await this.dataSource.getRepository(ThreeDSSession).findOneBy({ id });
    if (!session) throw ApiError.notFound(`3DS authentication ${id}`);
    if (session.status === 'Created' && session.expiresAt.getTime() <= Date.now()) {
      return this.complete.execute(id, { abandoned: 'expired' });
    }
    const transaction = await this.dataSource
      .getRepository(Transaction)
      .findOneByOrFail({ id: session.transactionId });
    return { session, transaction };
  }

  /** Saves the shopper's browser data while the authentication is still open. */
  async recordBrowser(id: string, browser: Record<string, unknown>): Promise<void> {
    await this.dataSource
      .getRepository(ThreeDSSession)
      .update({ id, status: 'Created' }, { browser } as QueryDeepPartialEntity<ThreeDSSession>);
  }
}
