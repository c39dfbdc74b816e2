import { Logger } from '@nestjs/common';
import { aesGcmOpen, aesGcmSeal } from '@byrd/platform';

const logger = new Logger('CardSeal');

/** A card kept while its shopper is in a 3DS challenge. CVV is deliberately not part of it. */
export interface SealedCardContent {
  number: string;
  expiration: string;
}

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
    return aesGcmSeal(this.key, Buffer.from(JSON.stringify(card), 'utf8'), sessionId);
  }

  open(sealed: Buffer, sessionId: string): SealedCardContent {
    return JSON.parse(aesGcmOpen(this.key, sealed, sessionId).toString('utf8')) as SealedCardContent;
  }

  /**
   * The card, or null (logged, never with card data) when it cannot be opened: sealed under another
   * CARD_SEAL_KEY (a replica configured apart, or the key changed since).
   */
  openOrNull(sealed: Buffer, sessionId: string): SealedCardContent | null {
    try {
      return this.open(sealed, sessionId);
    } catch (error) {
      logger.error(`3DS session ${sessionId}: its sealed card cannot be opened: ${String(error)}`);
      return null;
    }
  }
}
