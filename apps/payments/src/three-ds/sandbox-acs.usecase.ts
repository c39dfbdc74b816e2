import { Injectable, Logger } from '@nestjs/common';
import { toDecimalAmount, type TransStatus } from '@byrd/contracts';
import { ApiError, Rpc } from '@byrd/platform';
import { AuthenticationSessions, type SessionWithPayment } from './authentication-sessions.js';
import { CompleteAuthentication, type ChallengeEnding } from './complete-authentication.usecase.js';
import { decodeChallengeRequest, decodeMethodData, encodeMessage } from './emv-messages.js';
import { httpOrigin } from './pages/html.js';
import { ThreeDSLinks } from './three-ds-links.js';

/** The 3DS Method page's job: hand `threeDSMethodData` back to the 3DS server's notification URL. */
export interface MethodOutcome {
  notificationUrl: string | null;
  threeDSMethodData: string;
}

/** What the challenge page shows: enough to recognise the purchase, never the card number. */
export interface ChallengeView {
  threeDSServerTransID: string;
  acsTransID: string;
  /** Where the challenge form posts. */
  answerUrl: string;
  merchantName: string | null;
  /** Null for a card verification. */
  amount: string | null;
  currency: string;
  /** Last four digits only. */
  cardLast4: string | null;
  brand: string | null;
  reference: string | null;
  sandbox: boolean;
}

/** The end of a challenge: the CRes (EMV) the ACS posts to the 3DS server's notification URL. */
export interface ChallengeEnd {
  threeDSServerTransID: string;
  acsTransID: string;
  transStatus: TransStatus;
  authenticated: boolean;
  cres: string;
  notificationUrl: string;
}

/** The challenge form: Submit (also Enter in the code field) or Cancel. */
export interface ChallengeAnswer {
  action?: 'submit' | 'cancel';
  otp?: string;
}

const MERCHANT_LOOKUP_MS = 1_000;

/**
 * The sandbox issuer's ACS: its 3DS Method page and its challenge (OTP 1234, see
 * SandboxThreeDSProvider). The shopper's answer ends the authentication through CompleteAuthentication,
 * which authorises the payment.
 */
@Injectable()
export class SandboxAcs {
  private readonly logger = new Logger(SandboxAcs.name);

  constructor(
    private readonly sessions: AuthenticationSessions,
    private readonly complete: CompleteAuthentication,
    private readonly links: ThreeDSLinks,
    private readonly rpc: Rpc,
  ) {}

  /** The 3DS Method: the sandbox collects no device data, it only tells the 3DS server it ran. */
  runMethod(threeDSMethodData: string): MethodOutcome {
    const data = decodeMethodData(threeDSMethodData);
    const target = data.threeDSMethodNotificationURL;
    // Only our 3DS server's address: this page posts to it by itself, and its origin goes into the
    // page's form-action, so any other would make our domain post for a stranger's site.
    if (target !== undefined && httpOrigin(target) !== httpOrigin(this.links.notification)) {
      throw ApiError.invalidField(
        'threeDSMethodData.threeDSMethodNotificationURL',
        `must be this 3DS server's notification address (${this.links.notification})`,
      );
    }
    return {
      notificationUrl: target ?? null,
      threeDSMethodData: encodeMessage({ threeDSServerTransID: data.threeDSServerTransID }),
    };
  }

  /** The challenge for a CReq; when the authentication has already ended, its CRes straight away. */
  async openChallenge(creq: string): Promise<ChallengeView | ChallengeEnd> {
    const request = decodeChallengeRequest(creq);
    const current = await this.find(request.threeDSServerTransID, request.acsTransID);
    if (current.session.status !== 'Created') return this.ending(current);
    const { session, transaction } = current;
    return {
      threeDSServerTransID: session.id,
      acsTransID: session.acsTransId,
      answerUrl: `${this.links.base}/acs/challenge/${session.acsTransId}`,
      merchantName: await this.merchantNameOf(current),
      // A card verification (the vault's) charges nothing: no amount to confirm.
      amount:
        transaction.operationType === 'Verification'
          ? null
          : toDecimalAmount(transaction.isoAmount, transaction.currency),
      currency: transaction.currency,
      cardLast4: transaction.maskedCardNumber?.slice(-4) ?? null,
      brand: transaction.brand,
      reference: transaction.orderRef,
      sandbox: transaction.merchantMode === 'sandbox',
    };
  }

  /** The shopper submitted a code or canceled. Answering an ended challenge returns its outcome. */
  async answer(
    threeDSServerTransID: string,
    acsTransID: string,
    answer: ChallengeAnswer,
  ): Promise<ChallengeEnd> {
    await this.find(threeDSServerTransID, acsTransID);
    const ending: ChallengeEnding =
      answer.action === 'cancel' ? { abandoned: 'canceled' } : { answer: answer.otp ?? '' };
    return this.ending(await this.complete.execute(threeDSServerTransID, ending));
  }

  private async find(threeDSServerTransID: string, acsTransID: string): Promise<SessionWithPayment> {
    const current = await this.sessions.current(threeDSServerTransID);
    if (current.session.acsTransId !== acsTransID.toLowerCase()) {
      throw ApiError.notFound(`3DS challenge ${acsTransID}`);
    }
    return current;
  }

  private ending({ session }: SessionWithPayment): ChallengeEnd {
    const transStatus = session.transStatus ?? 'N';
    return {
      threeDSServerTransID: session.id,
      acsTransID: session.acsTransId,
      transStatus,
      authenticated: transStatus === 'Y',
      cres: encodeMessage({
        threeDSServerTransID: session.id,
        acsTransID: session.acsTransId,
        messageVersion: session.protocolVersion,
        messageType: 'CRes',
        transStatus,
        challengeCompletionInd: 'Y',
      }),
      notificationUrl: this.links.notification,
    };
  }

  /** The shop's name comes with its order; a payment without one, or orders not answering, shows none. */
  private async merchantNameOf({ transaction }: SessionWithPayment): Promise<string | null> {
    if (!transaction.orderId) return null;
    try {
      const order = await this.rpc.call(
        'rpc.orders.getForMerchant',
        { orderId: transaction.orderId, merchantId: transaction.merchantId },
        MERCHANT_LOOKUP_MS,
      );
      return order.merchantName ?? null;
    } catch (error) {
      this.logger.warn(`Merchant name of order ${transaction.orderId} unavailable: ${String(error)}`);
      return null;
    }
  }
}
