import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, IsNull } from 'typeorm';
import { cardExpiryEnd, type RequestTransactionMode } from '@byrd/contracts';
import { insertUnlessConflict, type CheckedCard } from '@byrd/platform';
import { CardCipher, CardFingerprint } from '../vault/card-cipher.js';
import { VaultMetrics } from '../vault/vault-metrics.js';
import { CardToken } from './card-token.entity.js';

/** A stored card: its token, whether this call made it, and the verification it had before. */
export interface StoredCard {
  token: CardToken;
  created: boolean;
  /** A known card's verification before this call replaced it (null for a new token). */
  previousVerificationId: string | null;
}

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
 * alias) instead of making a second one.
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
        return { token, created: true, previousVerificationId: null };

      const refreshed = await this.refresh(input, fingerprint);
      if (refreshed) return refreshed;
      // Gone since the insert met it: the request that made it failed and took it back. Store anew.
      if (attempt === STORE_ATTEMPTS)
        throw new Error('The card token vanished on every try to store the card');
    }
  }

  /**
   * Refreshes the known token under its row lock: what it keeps (an authenticated card's null
   * verification, its alias) is decided from the row as it is, not as a concurrent request for the
   * same card read it before writing over it. Null when the token is gone.
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
      const previousVerificationId = existing.verificationId;
      const { id, ...fields } = this.fieldsOf(existing.id, input, fingerprint, existing);
      await manager.update(CardToken, { id }, fields);
      return { token: Object.assign(existing, fields), created: false, previousVerificationId };
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
      // A known card its merchant authenticated (no verification to wait for) stays chargeable: the
      // same card sent again without 3DS data has nothing new to prove.
      verificationId: existing && existing.verificationId === null ? null : input.verificationId,
    } satisfies Partial<CardToken>;
  }
}
