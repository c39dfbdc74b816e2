import { createHmac } from 'node:crypto';
import { aesGcmOpen as decrypt, aesGcmSeal as encrypt, pooledRandomBytes } from '@byrd/platform';
import type { KeyRing } from './key-ring.js';

/** What the vault keeps of a card, encrypted. The CVV is never part of it. */
export interface VaultedCard {
  number: string;
  expiration: string;
  holder: string | null;
}

/** One encrypted record: the card under its own data key, the data key under a KEK. */
export interface SealedCard {
  ciphertext: Buffer;
  wrappedKey: Buffer;
  kekId: string;
}

/**
 * Envelope encryption of cards (PCI DSS requirement 3): AES-256-GCM with a fresh data key per
 * token, the data key wrapped (AES-256-GCM) by the active KEK, both bound to the token id by the
 * additional data, so a record cannot be moved to another token. Rotating a KEK re-wraps the small
 * data keys only; card ciphertexts never change.
 */
export class CardCipher {
  constructor(private readonly keys: KeyRing) {}

  seal(tokenId: string, card: VaultedCard): SealedCard {
    const dataKey = pooledRandomBytes(32);
    try {
      return {
        ciphertext: encrypt(dataKey, Buffer.from(JSON.stringify(card)), `card:${tokenId}`),
        wrappedKey: encrypt(this.keys.active.key, dataKey, `dek:${tokenId}`),
        kekId: this.keys.active.id,
      };
    } finally {
      dataKey.fill(0);
    }
  }

  /**
   * Another card of the token sealed under the token's data key (a re-tokenization it stages): no
   * second wrapped key, so re-wrapping the token's one (a KEK rotation) keeps both cards readable.
   */
  sealUnderKeyOf(tokenId: string, key: Omit<SealedCard, 'ciphertext'>, card: VaultedCard): Buffer {
    const dataKey = decrypt(this.keys.get(key.kekId), key.wrappedKey, `dek:${tokenId}`);
    try {
      return encrypt(dataKey, Buffer.from(JSON.stringify(card)), `card:${tokenId}`);
    } finally {
      dataKey.fill(0);
    }
  }

  open(tokenId: string, sealed: SealedCard): VaultedCard {
    const dataKey = decrypt(this.keys.get(sealed.kekId), sealed.wrappedKey, `dek:${tokenId}`);
    try {
      return JSON.parse(
        decrypt(dataKey, sealed.ciphertext, `card:${tokenId}`).toString('utf8'),
      ) as VaultedCard;
    } finally {
      dataKey.fill(0);
    }
  }

  /** The same data key, wrapped by the active KEK instead. */
  rewrap(tokenId: string, wrappedKey: Buffer, kekId: string): { wrappedKey: Buffer; kekId: string } {
    const dataKey = decrypt(this.keys.get(kekId), wrappedKey, `dek:${tokenId}`);
    try {
      return {
        wrappedKey: encrypt(this.keys.active.key, dataKey, `dek:${tokenId}`),
        kekId: this.keys.active.id,
      };
    } finally {
      dataKey.fill(0);
    }
  }

  get activeKekId(): string {
    return this.keys.active.id;
  }

  /** Every KEK this cipher unwraps with (VAULT_KEKS). */
  get kekIds(): string[] {
    return this.keys.ids;
  }
}

/**
 * Keyed fingerprint of a card number (HMAC-SHA256 under VAULT_FINGERPRINT_KEY, scoped to the
 * merchant): recognises the same card without storing anything a PAN can be recovered from.
 */
export class CardFingerprint {
  constructor(private readonly key: Buffer) {}

  of(merchantId: string, number: string): Buffer {
    return createHmac('sha256', this.key).update(`${merchantId}\u0000${number}`).digest();
  }
}
