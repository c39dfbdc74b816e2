import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isGuid, type ChargebackAction, type ChargebackResponse } from '@byrd/contracts';
import { ApiError, Refusal } from '@byrd/platform';
import { Chargeback } from './chargeback.entity.js';
import { ChargebackEventRecorder } from './chargeback-events.js';
import { ACTION_STATUS, canMove, CHARGEBACK_TRANSITIONS } from './chargeback-status.js';
import { presentChargeback } from './chargeback.presenter.js';

/** Moves a chargeback through its lifecycle (the scheme's decisions), announcing each step. */
@Injectable()
export class MoveChargeback {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: ChargebackEventRecorder,
  ) {}

  async execute(
    merchantId: string,
    chargebackId: string,
    action: ChargebackAction,
    idempotencyKey?: string,
  ): Promise<ChargebackResponse> {
    const missing = () => ApiError.notFound(`Chargeback ${chargebackId}`);
    if (!isGuid(chargebackId)) throw missing();
    const to = ACTION_STATUS[action];
    const moved = await this.dataSource.transaction(async (manager) => {
      // Locked: two concurrent moves are applied one after the other, each checked against the last.
      const chargeback = await manager.getRepository(Chargeback).findOne({
        where: { id: chargebackId, merchantId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!chargeback) throw missing();
      // The retry of the last move, whose first answer was lost: answered as it stands, moved once.
      const retried =
        idempotencyKey !== undefined &&
        chargeback.moveIdempotencyKey === idempotencyKey &&
        chargeback.status === to;
      if (retried) return chargeback;
      if (!canMove(chargeback.status, to)) {
        const next = CHARGEBACK_TRANSITIONS[chargeback.status];
        throw Refusal.notAllowed(
          `Chargeback ${chargebackId} is ${chargeback.status} and cannot become ${to}; ` +
            (next.length ? `it can become ${next.join(', ')}` : 'it is final'),
        );
      }
      chargeback.status = to;
      if (to === 'Won' || to === 'Lost') chargeback.resolution = to;
      chargeback.updatedAt = new Date();
      chargeback.moveIdempotencyKey = idempotencyKey ?? null;
      await manager.update(
        Chargeback,
        { id: chargeback.id, merchantId },
        {
          status: chargeback.status,
          resolution: chargeback.resolution,
          moveIdempotencyKey: chargeback.moveIdempotencyKey,
          updatedAt: chargeback.updatedAt,
        },
      );
      await this.events.record(manager, chargeback);
      return chargeback;
    });
    this.events.flush();
    return presentChargeback(moved);
  }
}
