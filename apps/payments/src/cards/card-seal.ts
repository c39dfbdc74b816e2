import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** A card kept while its shopper is in a 3DS challenge. CVV is deliberately not part of it. */
export interface SealedCardContent {
  number: string;
  expiration: string;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM sealing of a card number for the minutes of a 3DS challenge, bound to its session id
 * (additional data) so a sealed card cannot be replayed into another session.
 */
export class CardSeal {
  private readonly key: Buffer;

  constructor(base64Key: string) {
    this.key = Buffer.from(base64Key, 'base64');
    if (this.key.length !== 32) throw new Error('CARD_SEAL_KEY must be 32 bytes');
  }

  seal(card: SealedCardContent, sessionId: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(sessionId));
    const body = Buffer.concat([cipher.update(JSON.stringify(card), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer, sessionId: string): SealedCardContent {
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(sessionId));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as SealedCardContent;
  }
}
