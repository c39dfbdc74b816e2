import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  isGuid,
  RpcSubjects,
  type CardVerificationStarted,
  type VerifyCardRpcRequest,
} from '@byrd/contracts';
import { insertAtomically, Refusal, Rpc } from '@byrd/platform';
import { ACQUIRER, type Acquirer } from '../acquirer/acquirer.js';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import { CardCharge } from '../payments/card-charge.js';
import { VerifiedCards } from '../payments/verified-cards.js';
import { newPayment } from '../payments-core/new-payment.js';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import { Transaction } from '../transactions/transaction.entity.js';

/** Zero-amount verifications carry a currency all the same; the sandbox's is the euro. */
const VERIFICATION_CURRENCY = 'EUR';

/**
 * `rpc.payments.verifyCard` (the vault only): authenticates the cardholder of a new token with
 * 3DS, as a zero-amount card verification. It is a transaction of its own (`Verification`) that
 * runs the same 3DS pages as a payment but never reaches the acquirer, is never announced and is
 * never listed; a token payment checks it succeeded. The shopper always goes through `actionUrl`,
 * which, for a frictionless card, returns to the redirect address at once.
 */
@Injectable()
export class VerifyCard {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rpc: Rpc,
    private readonly charge: CardCharge,
    @Inject(ACQUIRER) private readonly acquirer: Acquirer,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
    private readonly verifiedCards: VerifiedCards,
  ) {}

  async execute(request: VerifyCardRpcRequest): Promise<CardVerificationStarted> {
    // The card this verification is for: one a re-tokenization staged under its id, else the token's.
    const card = await this.rpc.call(RpcSubjects.TokensDetokenize, {
      merchantId: request.merchantId,
      tokenId: request.tokenId,
      verificationId: request.verificationId,
    });
    if (card.isExpired) {
      throw Refusal.cardExpired(`The card expired in ${card.expiration}`);
    }
    const now = new Date();
    const transaction = newPayment({
      payer: {
        merchantId: request.merchantId,
        mode: request.merchantMode,
        order: null,
        initiatedFrom: 'Server',
        orderRef: null,
      },
      request: { currency: VERIFICATION_CURRENCY, redirectUrl: request.redirectUrl ?? undefined },
      isoAmount: 0,
      paymentMethod: 'card',
      isPreAuth: false,
      acquirer: this.acquirer.name,
      requestId: randomUUID(),
      expiresAt: new Date(now.getTime() + this.config.THREE_DS_TIMEOUT_MS),
      now,
    });
    Object.assign(transaction, {
      // The id the vault already recorded on the token, so the token waits for this very verification.
      id: request.verificationId && isGuid(request.verificationId) ? request.verificationId : transaction.id,
      operationType: 'Verification',
      tokenId: request.tokenId,
    });
    const { session } = await this.charge.start(
      transaction,
      { number: card.number, expiration: card.expiration, holder: card.holder },
      now,
    );
    await insertAtomically(this.dataSource, [
      { target: Transaction, entity: transaction },
      { target: ThreeDSSession, entity: session },
    ]);
    // A frictionless cardholder is verified already.
    await this.verifiedCards.ended(transaction);
    return { verificationId: transaction.id, actionUrl: this.charge.actionUrl(session.id) };
  }
}
