import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, IsNull } from 'typeorm';
import { cardExpiryEnd, type RequestTransactionMode } from '@byrd/contracts';
import { insertUnlessConflict, type CheckedCard } from '@byrd/platform';
import { CardCipher, CardFingerprint } from '../vault/card-cipher.js';
import { VaultMetrics } from '../vault/vault-metrics.js';
import { CardToken } from './card-token.entity.js';

/** A stored card: its token, whether this call made it, and the verification it waits on. */
export interface StoredCard {
  /** The token to answer with: a staged card shown as the token will be once it is verified. */
  token: CardToken;
  created: boolean;
  /**
   * The verification the caller must start: its new token's, or the one its staged card waits on;
   * null when none is needed (the card was authenticated, or was known as authenticated).
   */
  verifies: string | null;
}

/** A token with no card staged on it. */
const NOTHING_STAGED = {
  stagedVerificationId: null,
  stagedCardCiphertext: null,
  stagedExpiration: null,
  stagedExpiresAt: null,
  stagedAlias: null,
  stagedTransactionMode: null,
  stagedAt: null,
} satisfies Partial<CardToken>;

/**
 * The staged card becomes the token's own, waiting on its verification (what `PromoteVerifiedCard`
 * does once it succeeded, without the verified mark). The same card, sealed under the token's key.
 */
const HAND_OVER_TO_STAGED = `
  UPDATE card_tokens
     SET card_ciphertext = staged_card_ciphertext, expiration = staged_expiration,
         expires_at = staged_expires_at, alias = staged_alias,
         transaction_mode = staged_transaction_mode, verification_id = staged_verification_id,
         staged_verification_id = NULL, staged_card_ciphertext = NULL, staged_expiration = NULL,
         staged_expires_at = NULL, staged_alias = NULL, staged_transaction_mode = NULL,
         staged_at = NULL, updated_at = now()
   WHERE id = $1`;

/** Tries at storing a card whose token a concurrent request deletes meanwhile (its clean-up). */
const STORE_ATTEMPTS = 3;

export interface CardToStore {
  merchantId: string;
  customReference: string | null;
  alias: string | null;
  card: CheckedCard;
  holder: string | null;
  transactionMode: RequestTransactionMode | null;
  /**
   * The 3DS verification the token must pass before it is charged (null: none, the shopper was
   * authenticated already), written with the card, before anyone is asked to start it (write-ahead).
   */
  verificationId: string | null;
}

/**
 * Writes cards into the vault. The same card (keyed fingerprint) for the same merchant and
 * customer reference is one token: storing it again refreshes that token (a renewed expiry, a new
 * alias) instead of making a second one. A refresh that waits on a verification is staged beside
 * the token's card and becomes the token's only once that verification succeeded
 * (`PromoteVerifiedCard`): until then the token is charged, read and detokenized as it was.
 */
@Injectable()
export class CardStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cipher: CardCipher,
    private readonly fingerprints: CardFingerprint,
    private readonly metrics: VaultMetrics,
  ) {}

  store(stored: CardToStore): Promise<StoredCard> {
    return this.metrics.measure(
      'tokenize',
      () => this.storeCard(stored),
      (r) => (r.created ? 'stored' : 'refreshed'),
    );
  }

  private async storeCard(stored: CardToStore): Promise<StoredCard> {
    // An empty reference is no reference (clients send "" for absent): one token either way, as the
    // unique index (coalesce(custom_reference, '')) already says.
    const input = { ...stored, customReference: stored.customReference || null };
    const fingerprint = this.fingerprints.of(input.merchantId, input.card.number);
    for (let attempt = 1; ; attempt++) {
      // A new card is the common case: one prepared statement, which does nothing when the card is known.
      const token = this.tokenOf(randomUUID(), input, fingerprint);
      if (await insertUnlessConflict(this.dataSource, { target: CardToken, entity: token }))
        return { token, created: true, verifies: input.verificationId };

      const refreshed = await this.refresh(input, fingerprint);
      if (refreshed) return refreshed;
      // Gone since the insert met it: the request that made it failed and took it back. Store anew.
      if (attempt === STORE_ATTEMPTS)
        throw new Error('The card token vanished on every try to store the card');
    }
  }

  /**
   * Whether the merchant deleted this card (for this customer reference) after `since`: a card saved
   * for a payment made before the delete must not come back with it (card_deletions).
   */
  async deletedSince(
    card: { merchantId: string; customReference: string | null; number: string },
    since: Date,
  ): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `SELECT 1 FROM card_deletions
        WHERE merchant_id = $1 AND custom_reference = $2 AND fingerprint = $3 AND deleted_at > $4`,
      [
        card.merchantId,
        card.customReference ?? '',
        this.fingerprints.of(card.merchantId, card.number),
        since,
      ],
    );
    return rows.length > 0;
  }

  /**
   * Undoes what a request whose verification could not be started wrote: a token it made is not
   * kept, and a card it staged is dropped. Only while they still wait on this request's
   * verification: a concurrent request for the same card that authenticated its own since answers
   * with the token, and keeps it. One that staged the same card on the token meanwhile (and may be
   * starting its verification) is handed the token: its staged card takes the token's place, as if
   * it had made it, so its answer holds, and its own failure takes the token back in turn (else
   * two failed requests would leave a token neither answered with). A verified token is never taken
   * back: its card is chargeable, and its merchant may already hold it.
   */
  async takeBack(tokenId: string, verificationId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const [token] = await manager.query<
        { verification_id: string | null; staged_verification_id: string | null; verified: boolean }[]
      >(
        `SELECT verification_id, staged_verification_id, verified_at IS NOT NULL AS verified
           FROM card_tokens WHERE id = $1 FOR UPDATE`,
        [tokenId],
      );
      if (!token) return;
      if (token.staged_verification_id === verificationId) {
        await manager.update(CardToken, { id: tokenId }, NOTHING_STAGED);
      } else if (token.verification_id !== verificationId) {
        return; // another request's card, or one needing no verification, since
      } else if (token.verified) {
        // This very verification passed (a frictionless card, promoted while payments answered) and
        // only its answer was lost, or the token was verified before: a card chargeable now stays.
        return;
      } else if (token.staged_verification_id === null) {
        await manager.delete(CardToken, { id: tokenId });
      } else {
        await manager.query(HAND_OVER_TO_STAGED, [tokenId]);
      }
    });
  }

  /**
   * Refreshes the known token under its row lock: what it keeps (an authenticated card's null
   * verification, its alias) is decided from the row as it is, not as a concurrent request for the
   * same card read it before writing over it. A card waiting on a verification is staged, the token
   * left as it is (a later staging replaces it); one needing none is written over the token, and
   * any staged card with it. Null when the token is gone.
   */
  private refresh(input: CardToStore, fingerprint: Buffer): Promise<StoredCard | null> {
    return this.dataSource.transaction(async (manager) => {
      const existing = await manager.findOne(CardToken, {
        where: {
          merchantId: input.merchantId,
          customReference: input.customReference ?? IsNull(),
          fingerprint,
        },
        lock: { mode: 'pessimistic_write' },
      });
      if (!existing) return null;
      if (input.verificationId !== null && existing.verificationId !== null) {
        // Its data key (select: false), to seal the staged card under: read under the row lock, so
        // a KEK rotation's re-wrap is either before it or after this commits.
        const [{ wrapped_key: wrappedKey }] = await manager.query<{ wrapped_key: Buffer }[]>(
          `SELECT wrapped_key FROM card_tokens WHERE id = $1`,
          [existing.id],
        );
        const staged = {
          stagedVerificationId: input.verificationId,
          stagedCardCiphertext: this.cipher.sealUnderKeyOf(
            existing.id,
            { wrappedKey, kekId: existing.kekId },
            { number: input.card.number, expiration: input.card.expiration, holder: input.holder },
          ),
          stagedExpiration: input.card.expiration,
          stagedExpiresAt: cardExpiryEnd(input.card.expiration),
          stagedAlias: input.alias ?? existing.alias,
          stagedTransactionMode: input.transactionMode ?? existing.transactionMode,
          // Dropped once its verification can no longer succeed (ForgetUnverifiedCards).
          stagedAt: new Date(),
        } satisfies Partial<CardToken>;
        await manager.update(CardToken, { id: existing.id }, staged);
        const asVerified = Object.assign(new CardToken(), existing, {
          expiration: staged.stagedExpiration,
          expiresAt: staged.stagedExpiresAt,
          alias: staged.stagedAlias,
          transactionMode: staged.stagedTransactionMode,
        });
        return { token: asVerified, created: false, verifies: input.verificationId };
      }
      // Authenticated now, or known as authenticated: nothing to wait on.
      const { id, ...fields } = this.fieldsOf(existing.id, input, fingerprint, existing);
      await manager.update(CardToken, { id }, fields);
      return { token: Object.assign(existing, fields), created: false, verifies: null };
    });
  }

  private tokenOf(id: string, input: CardToStore, fingerprint: Buffer): CardToken {
    return Object.assign(new CardToken(), this.fieldsOf(id, input, fingerprint, null));
  }

  /** What storing the card writes: a new token's columns, or a known one's refreshed columns. */
  private fieldsOf(id: string, input: CardToStore, fingerprint: Buffer, existing: CardToken | null) {
    const sealed = this.cipher.seal(id, {
      number: input.card.number,
      expiration: input.card.expiration,
      holder: input.holder,
    });
    // A known card its merchant authenticated (no verification to wait for) stays chargeable: the
    // same card sent again without 3DS data has nothing new to prove.
    const verificationId = existing && existing.verificationId === null ? null : input.verificationId;
    return {
      id,
      merchantId: input.merchantId,
      customReference: input.customReference,
      alias: input.alias ?? existing?.alias ?? null,
      brand: input.card.brand,
      maskedNumber: input.card.masked,
      expiration: input.card.expiration,
      expiresAt: cardExpiryEnd(input.card.expiration),
      fingerprint,
      cardCiphertext: sealed.ciphertext,
      wrappedKey: sealed.wrappedKey,
      kekId: sealed.kekId,
      transactionMode: input.transactionMode ?? existing?.transactionMode ?? null,
      verificationId,
      // Verified once, verified for good; with nothing to wait on, verified now. Else it waits, and
      // is forgotten if its verification never succeeds (ForgetUnverifiedCards).
      verifiedAt: existing?.verifiedAt ?? (verificationId === null ? new Date() : null),
      ...NOTHING_STAGED,
    } satisfies Partial<CardToken>;
  }
}
