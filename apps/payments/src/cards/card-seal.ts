import { Logger } from '@nestjs/common';
import { aesGcmOpen, aesGcmSeal, parseKeyList } from '@byrd/platform';

const logger = new Logger('CardSeal');

/** A card kept while its shopper is in a 3DS challenge. CVV is deliberately not part of it. */
export interface SealedCardContent {
  number: string;
  expiration: string;
}

/**
 * AES-256-GCM sealing of a card number for the minutes of a 3DS challenge, bound to its session id
 * (additional data) so a sealed card cannot be replayed into another session. CARD_SEAL_KEY is a
 * list so it can be rotated with no card lost: the first key seals, every key opens (GCM refuses a
 * wrong key, so each is tried in turn); docs/operations.md, "Card seal key".
 */
export class CardSeal {
  private readonly keys: Buffer[];

  constructor(cardSealKey: string) {
    this.keys = parseKeyList(cardSealKey);
  }

  seal(card: SealedCardContent, sessionId: string): Buffer {
    return aesGcmSeal(this.keys[0], Buffer.from(JSON.stringify(card), 'utf8'), sessionId);
  }

  open(sealed: Buffer, sessionId: string): SealedCardContent {
    let failure: unknown;
    for (const key of this.keys) {
      try {
        return JSON.parse(aesGcmOpen(key, sealed, sessionId).toString('utf8')) as SealedCardContent;
      } catch (error) {
        failure = error;
      }
    }
    throw failure;
  }

  /**
   * The card, or null (logged, never with card data) when it cannot be opened: sealed under a key
   * not in CARD_SEAL_KEY (a replica configured apart, or a key dropped too early).
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
