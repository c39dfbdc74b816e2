import type {
  CreateTokenRequest,
  CreateTokenResponse,
  RequestTransactionMode,
  TokenResponse,
} from '@byrd/contracts';
import { describe as describeCode } from '@byrd/contracts';
import type { CardToken } from './card-token.entity.js';

/** `GET /api/v2/tokens/{tokenId}` and each item of the list. */
export function presentToken(token: CardToken, now = new Date()): TokenResponse {
  return {
    tokenId: token.id,
    customReference: token.customReference,
    alias: token.alias,
    brand: token.brand,
    expiration: token.expiration,
    maskedCardNumber: token.maskedNumber,
    isExpired: token.expiresAt.getTime() <= now.getTime(),
  };
}

/** Usage of a stored credential, from the mode it was tokenized for. */
function usageOf(mode: RequestTransactionMode | null): string {
  if (mode === 'initialRecurring' || mode === 'merchantInitiatedRecurring') return 'Recurring';
  if (mode) return 'Unscheduled';
  return 'Undefined';
}

/** `POST /api/v2/tokens` → 201: the card as stored, masked; the 3DS data echoed as sent. */
export function presentCreatedToken(
  token: CardToken,
  request: CreateTokenRequest,
  actionUrl: string | null,
): CreateTokenResponse {
  const card = request.Card;
  const code = actionUrl ? 'BYRD207' : 'BYRD200';
  return {
    card: {
      number: token.maskedNumber,
      expiration: token.expiration,
      cvv: card.cvv ? '*'.repeat(card.cvv.length) : null,
      holder: card.holder ?? null,
      aav: card.aav ?? null,
      dsTransactionId: card.dsTransactionId ?? null,
      eci: card.eci ?? null,
      xid: card.xid ?? null,
      verificationMethod: 'ThreeDSecure',
      scheme: 'Undefined',
      usage: usageOf(token.transactionMode),
      // Needs an issuer BIN table, which the sandbox does not have.
      countryCode: null,
    },
    tokenId: token.id,
    customReference: token.customReference,
    alias: token.alias,
    action: actionUrl ? { type: 'redirect', url: actionUrl } : null,
    code,
    description: describeCode(code),
  };
}
