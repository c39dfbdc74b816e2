import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RpcSubjects } from '@byrd/contracts';
import { PeriodicSweep, Rpc } from '@byrd/platform';
import { TOKENS_CONFIG, type TokensConfig } from '../config.js';
import { PromoteVerifiedCard } from './token-queries.usecases.js';

const BATCH_SIZE = 100;
/** Batches per run at most: what is left waits for the next run. */
const MAX_BATCHES = 50;

/** A token the sweep looks at: never verified past the grace, or with a card staged that long ago. */
interface Waiting {
  id: string;
  merchantId: string;
  verified: boolean;
  stagedVerificationId: string | null;
  stagedStale: boolean;
}

/**
 * Forgets the cards whose verification never succeeded, once it no longer can
 * (UNVERIFIED_CARD_GRACE_MS): a token whose shopper abandoned 3DS (or whose verification the vault
 * died before starting) is deleted with the create answers kept for its idempotency-keys, as
 * `DELETE /tokens/{id}` does; a card a re-tokenization staged and nobody verified is dropped, the
 * token left as it was. The vault is told of each success best effort (`rpc.tokens.verified`), so
 * before forgetting anything it asks payments, where the outcome is recorded, and takes in what it
 * missed instead; payments away, nothing is forgotten.
 *
 * Each change is one conditional statement that checks again, under the row lock, what the choice
 * was made on: a verification landing at the same moment either commits first (the token is then
 * verified and kept, or its staged card promoted) or finds the token gone / its card unstaged.
 * Replicas sweeping at once forget each card once; a kill between statements leaves each row whole.
 */
@Injectable()
export class ForgetUnverifiedCards extends PeriodicSweep {
  protected readonly sweepName = 'Unverified cards sweep';

  constructor(
    private readonly dataSource: DataSource,
    private readonly rpc: Rpc,
    private readonly promote: PromoteVerifiedCard,
    @Inject(TOKENS_CONFIG) private readonly config: TokensConfig,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.config.UNVERIFIED_CARD_SWEEP_MS;
  }

  /** One run; returns how many cards it forgot (tokens deleted and staged cards dropped). */
  async execute(): Promise<number> {
    let forgotten = 0;
    for (let batch = 0; batch < MAX_BATCHES && !this.stopping; batch++) {
      const waiting = await this.waiting();
      let changed = 0;
      for (const [merchantId, tokens] of groupBy(waiting, (t) => t.merchantId, (t) => t)) {
        const succeeded = await this.succeededVerifications(merchantId, tokens);
        for (const token of tokens) {
          const { forgot, touched } = await this.settle(token, succeeded.get(token.id) ?? []);
          forgotten += forgot;
          changed += touched;
        }
      }
      // A short batch was the last; one that changed nothing would come back the same.
      if (waiting.length < BATCH_SIZE || changed === 0) break;
    }
    if (forgotten > 0) this.logger.log(`Forgot ${forgotten} cards whose verification never succeeded`);
    return forgotten;
  }

  /** The oldest tokens waiting past the grace: never verified, or with a card staged that long. */
  private async waiting(): Promise<Waiting[]> {
    const rows = await this.dataSource.query<
      {
        id: string;
        merchant_id: string;
        verified: boolean;
        staged_verification_id: string | null;
        staged_stale: boolean;
      }[]
    >(
      `WITH cutoff AS (SELECT now() - make_interval(secs => $1::double precision / 1000) AS at),
       waiting AS (
         (SELECT id FROM card_tokens, cutoff
           WHERE verified_at IS NULL AND verification_id IS NOT NULL AND created_at < cutoff.at
             AND (staged_at IS NULL OR staged_at < cutoff.at)
           ORDER BY created_at LIMIT $2)
         UNION
         (SELECT id FROM card_tokens, cutoff
           WHERE staged_at IS NOT NULL AND staged_at < cutoff.at ORDER BY staged_at LIMIT $2))
       SELECT t.id, t.merchant_id, t.verified_at IS NOT NULL AS verified, t.staged_verification_id,
              coalesce(t.staged_at < cutoff.at, false) AS staged_stale
         FROM card_tokens t JOIN waiting USING (id), cutoff
        LIMIT $2`,
      [this.config.UNVERIFIED_CARD_GRACE_MS, BATCH_SIZE],
    );
    return rows.map((r) => ({
      id: r.id,
      merchantId: r.merchant_id,
      verified: r.verified,
      stagedVerificationId: r.staged_verification_id,
      stagedStale: r.staged_stale,
    }));
  }

  /** Payments' record of which verifications of these tokens succeeded, by token. */
  private async succeededVerifications(
    merchantId: string,
    tokens: Waiting[],
  ): Promise<Map<string, string[]>> {
    const { succeeded } = await this.rpc.call(RpcSubjects.PaymentsTokenVerifications, {
      merchantId,
      tokenIds: tokens.map((t) => t.id),
    });
    return groupBy(succeeded, (s) => s.tokenId, (s) => s.verificationId);
  }

  private async settle(token: Waiting, succeeded: string[]): Promise<{ forgot: number; touched: number }> {
    // Verified after all (the vault missed hearing it): recorded, and a staged card it verified taken in.
    for (const verificationId of succeeded) {
      await this.promote.execute({ merchantId: token.merchantId, tokenId: token.id, verificationId });
    }
    if (!token.verified && succeeded.length === 0) {
      return (await this.forgetToken(token)) ? { forgot: 1, touched: 1 } : { forgot: 0, touched: 0 };
    }
    const staged = token.stagedVerificationId;
    if (staged && token.stagedStale && !succeeded.includes(staged)) {
      const dropped = await this.dropStagedCard(token, staged);
      return { forgot: dropped ? 1 : 0, touched: dropped || succeeded.length > 0 ? 1 : 0 };
    }
    return { forgot: 0, touched: succeeded.length > 0 ? 1 : 0 };
  }

  /**
   * Deletes a token still unverified past the grace (its own card's and any staged card's), with the
   * create answers naming it (DeleteToken's erasure). Never one made without a verification to wait on.
   */
  private forgetToken(token: Waiting): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const [, affected] = await manager.query<[unknown, number]>(
        `DELETE FROM card_tokens
          WHERE id = $1 AND merchant_id = $2 AND verified_at IS NULL AND verification_id IS NOT NULL
            AND created_at < now() - make_interval(secs => $3::double precision / 1000)
            AND (staged_at IS NULL OR staged_at < now() - make_interval(secs => $3::double precision / 1000))`,
        [token.id, token.merchantId, this.config.UNVERIFIED_CARD_GRACE_MS],
      );
      if (!affected) return false;
      // By the index of answers naming a token (migration 1765300000200).
      await manager.query(
        `DELETE FROM idempotency_keys
          WHERE merchant_id = $1 AND response_body ? 'tokenId' AND response_body ->> 'tokenId' = $2`,
        [token.merchantId, token.id],
      );
      return true;
    });
  }

  /** Drops the card staged under that verification, if it still waits there past the grace. */
  private async dropStagedCard(token: Waiting, verificationId: string): Promise<boolean> {
    const [, affected] = await this.dataSource.query<[unknown, number]>(
      `UPDATE card_tokens
          SET staged_verification_id = NULL, staged_card_ciphertext = NULL, staged_expiration = NULL,
              staged_expires_at = NULL, staged_alias = NULL, staged_transaction_mode = NULL,
              staged_at = NULL, updated_at = now()
        WHERE id = $1 AND merchant_id = $2 AND staged_verification_id = $3
          AND staged_at < now() - make_interval(secs => $4::double precision / 1000)`,
      [token.id, token.merchantId, verificationId, this.config.UNVERIFIED_CARD_GRACE_MS],
    );
    return affected > 0;
  }
}

function groupBy<T, V>(items: readonly T[], key: (item: T) => string, value: (item: T) => V): Map<string, V[]> {
  const groups = new Map<string, V[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(value(item));
    else groups.set(key(item), [value(item)]);
  }
  return groups;
}
