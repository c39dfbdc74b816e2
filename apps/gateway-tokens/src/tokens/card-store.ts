import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, IsNull } from 'typeorm';
import { cardExpiryEnd, type RequestTransactionMode } from '@byrd/contracts';
import { insertUnlessConflict, type CheckedCard } from '@byrd/platform';
import { CardCipher, CardFingerprint } from '../vault/card-cipher.js';
import { VaultMetrics } from '../vault/vault-metrics.js';
import { CardToken } from './card-token.entity.js';

export interface CardToStore {
  merchantId: string;
  customReference: string | null;
  alias: string | null;
  card: CheckedCard;
  holder: string | null;
  transactionMode: RequestTransactionMode | null;
  /**
   * The 3DS verification a NEW token must pass before it is charged (null: none, the shopper was
   * authenticated already). A known card keeps its own until the caller sets another.
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

  store(stored: CardToStore): Promise<{ token: CardToken; created: boolean }> {
    return this.metrics.measure(
      'tokenize',
      () => this.storeCard(stored),
      (r) => (r.created ? 'stored' : 'refreshed'),
    );
  }

  private async storeCard(stored: CardToStore): Promise<{ token: CardToken; created: boolean }> {
    // An empty reference is no reference (clients send "" for absent): one token either way, as the
    // unique index (coalesce(custom_reference, '')) already says.
    const input = { ...stored, customReference: stored.customReference || null };
    const repository = this.dataSource.getRepository(CardToken);
    const fingerprint = this.fingerprints.of(input.merchantId, input.card.number);
    // A new card is the common case: one prepared statement, which does nothing when the card is known.
    const token = this.tokenOf(randomUUID(), input, fingerprint, null);
    if (await insertUnlessConflict(this.dataSource, { target: CardToken, entity: token }))
      return { token, created: true };

    const existing = await repository.findOneByOrFail({
      merchantId: input.merchantId,
      customReference: input.customReference ?? IsNull(),
      fingerprint,
    });
    const refreshed = this.tokenOf(existing.id, input, fingerprint, existing);
    await repository.save(refreshed);
    return { token: refreshed, created: false };
  }

  private tokenOf(
    id: string,
    input: CardToStore,
    fingerprint: Buffer,
    existing: CardToken | null,
  ): CardToken {
    const sealed = this.cipher.seal(id, {
      number: input.card.number,
      expiration: input.card.expiration,
      holder: input.holder,
    });
    return Object.assign(existing ?? new CardToken(), {
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
      verificationId: existing ? existing.verificationId : input.verificationId,
    } satisfies Partial<CardToken>);
  }
}
