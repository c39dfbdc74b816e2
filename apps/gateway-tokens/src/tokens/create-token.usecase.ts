import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  RpcSubjects,
  type CreateTokenRequest,
  type CreateTokenResponse,
  type TokenCreateRpcRequest,
  type TokenResponse,
} from '@byrd/contracts';
import { ApiError, checkCard, ErrorKind, checkThreeDSData, Rpc, type MerchantContext } from '@byrd/platform';
import { CardStore } from './card-store.js';
import { presentCreatedToken, presentToken } from './token.presenter.js';

/**
 * `POST /api/v2/tokens`: checks and vaults the card. Unless the merchant sent 3DS data proving an
 * authentication (checked, not just present: `checkThreeDSData`; an ECI saying "not authenticated"
 * proves none), the cardholder is verified through the payments 3DS server: the answer is BYRD207
 * with the page to send the shopper to, and payments charges the token only once that verification
 * succeeded. A known card sent again waits on its verification staged beside the token (CardStore),
 * so a refused or abandoned one leaves the token as it was. Malformed 3DS data is a 400 before
 * anything is stored.
 */
@Injectable()
export class CreateToken {
  constructor(
    private readonly store: CardStore,
    private readonly rpc: Rpc,
  ) {}

  async execute(merchant: MerchantContext, request: CreateTokenRequest): Promise<CreateTokenResponse> {
    const card = checkCard(request.Card, new Date(), 'Card');
    const { verified: authenticated } = checkThreeDSData(request.Card, card.brand, 'Card');
    // Written ahead with the card, new or known: until payments has started this verification (and
    // the shopper passed it), the token cannot be charged, even if this process dies while asking.
    const verificationId = authenticated ? null : randomUUID();
    const { token, verifies } = await this.store.store({
      merchantId: merchant.merchantId,
      customReference: request.CustomReference ?? null,
      alias: request.Alias ?? null,
      card,
      holder: request.Card.holder ?? null,
      transactionMode: request.transactionMode ?? request.Card.transactionMode ?? null,
      verificationId,
    });
    // Nothing to verify: 3DS data came with it, or the card was already authenticated that way.
    if (!verifies) return presentCreatedToken(token, request, null);
    try {
      const started = await this.rpc.call(RpcSubjects.PaymentsVerifyCard, {
        merchantId: merchant.merchantId,
        merchantMode: merchant.mode,
        tokenId: token.id,
        redirectUrl: request.RedirectUrl ?? null,
        verificationId: verifies,
      });
      return presentCreatedToken(token, request, started.actionUrl);
    } catch (error) {
      await this.store.takeBack(token.id, verifies);
      throw error;
    }
  }
}

/**
 * `rpc.tokens.create`, called by payments only (RPC_CALLERS): the hosted form's "save my card".
 * Payments calls it once a hosted-form card payment has succeeded, its shopper authenticated with
 * 3DS while paying, so the token needs no separate verification.
 */
@Injectable()
export class SaveAuthenticatedCard {
  constructor(
    private readonly dataSource: DataSource,
    private readonly store: CardStore,
  ) {}

  async execute(request: TokenCreateRpcRequest): Promise<TokenResponse> {
    const card = checkCard(request.card, new Date(), 'card');
    // A save arriving late (its first answer lost, the vault away) for a payment made before the
    // merchant deleted the card, at its shopper's wish: the card is not brought back.
    const paidAt = request.paidAt === undefined ? null : new Date(request.paidAt);
    if (paidAt && Number.isNaN(paidAt.getTime())) throw ApiError.invalid('paidAt is not a date');
    const saved = {
      merchantId: request.merchantId,
      customReference: request.customReference,
      number: card.number,
    };
    if (paidAt && (await this.store.deletedSince(saved, paidAt))) {
      throw new ApiError(
        ErrorKind.NotFound,
        'The card was deleted after this payment; it is not saved again',
      );
    }
    const { token } = await this.store.store({
      merchantId: request.merchantId,
      customReference: request.customReference,
      alias: request.alias,
      card,
      holder: request.card.holder,
      transactionMode: request.transactionMode ?? null,
      verificationId: null,
    });
    return presentToken(token);
  }
}
