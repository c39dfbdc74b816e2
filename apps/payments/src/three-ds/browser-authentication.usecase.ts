import { Inject, Injectable } from '@nestjs/common';
import type {
  TransactionStatus,
  ThreeDSAuthRequest,
  ThreeDSAuthResponse,
  ThreeDSPostAuthResponse,
  ThreeDSPreAuthRequest,
  ThreeDSPreAuthResponse,
} from '@byrd/contracts';
import { ApiError, Refusal } from '@byrd/platform';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import type { Transaction } from '../transactions/transaction.entity.js';
import { AuthenticationSessions, type SessionWithPayment } from './authentication-sessions.js';
import { decodeChallengeResponse, decodeMethodData } from './emv-messages.js';
import { ThreeDSLinks } from './three-ds-links.js';
import { THREE_DS_PROVIDER, type ThreeDSProvider } from '../three-ds-server/three-ds-provider.js';
import { presentAuth, presentPostAuth, presentPreAuth, returnUrlOf } from './three-ds.presenter.js';

/**
 * Where `action.url` takes the shopper: through the flow, to a page that waits for the payment's
 * outcome, back to the shop, or to the outcome (`status`: the transaction's, or Processing).
 */
export type Landing =
  | { kind: 'authenticate'; sessionId: string; requestId: string; verifiesCard: boolean }
  | { kind: 'settling' }
  | { kind: 'return'; url: string }
  | { kind: 'outcome'; ended: SessionWithPayment; status: TransactionStatus };

/** What our notification page tells the SDK's page. */
export type Notification =
  | { type: 'byrd-3ds-method-complete'; id: string }
  | { type: 'byrd-3ds-challenge-complete'; id: string; transStatus: string };

/**
 * The 3DS browser SDK protocol (preAuth → 3DS Method → auth → challenge → postAuth), for our SDK,
 * the public one, and the hosted page behind `action.url`.
 */
@Injectable()
export class BrowserAuthentication {
  constructor(
    private readonly sessions: AuthenticationSessions,
    private readonly links: ThreeDSLinks,
    @Inject(THREE_DS_PROVIDER) private readonly provider: ThreeDSProvider,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  /** Records the shopper's browser for the issuer and says where the issuer's 3DS Method runs. */
  async preAuth(id: string, request: ThreeDSPreAuthRequest): Promise<ThreeDSPreAuthResponse> {
    const { session } = await this.sessions.current(id);
    const open = session.status === 'Created';
    // Customer and addresses only feed a real issuer's risk analysis: the sandbox keeps no PII.
    if (open) await this.sessions.recordBrowser(id, { ...request.browser });
    const { methodUrl } = this.provider.acsUrls(this.links.base);
    return presentPreAuth(session, open ? methodUrl : '', this.links.notification);
  }

  /**
   * Authenticates: the challenge page when the shopper must answer the issuer, none otherwise (a
   * frictionless result was known when the payment was created). The sandbox issuer does no risk
   * analysis, so `threeDSCompInd` does not change its decision.
   */
  async auth(id: string, _request: ThreeDSAuthRequest): Promise<ThreeDSAuthResponse> {
    const { session } = await this.sessions.current(id);
    const challenge = session.status === 'Created' && session.challengeRequired;
    return presentAuth(session, challenge ? this.provider.acsUrls(this.links.base).challengeUrl : '');
  }

  /**
   * The outcome, once there is one: 409 while the shopper has not answered the challenge, and while
   * the payment it allowed is still at the acquirer (committed before the call: write-ahead) or its
   * answer was lost (TemporaryFailed, acquirerPendingSince still set: the recovery settles it from
   * what the acquirer recorded, usually Success). The SDK keeps polling instead of reading an
   * unsettled payment as failed, so the merchant's page never offers a retry that charges twice.
   */
  async postAuth(id: string): Promise<ThreeDSPostAuthResponse> {
    const { session, transaction } = await this.sessions.current(id);
    if (session.status === 'Created') {
      throw Refusal.awaitingShopper('The shopper has not answered the 3DS challenge yet');
    }
    if (outcomeUnknown(transaction)) throw Refusal.awaitingShopper('The payment is being processed');
    return presentPostAuth(session, transaction);
  }

  /**
   * `GET /3ds/authenticate/{id}`: run the flow; once it has ended, return to the shop with the
   * payment's outcome. While that is unknown (at the acquirer, or its answer lost and the recovery
   * settling it, usually as Success) a shopper sent back "failed" would pay again: the page waits as
   * long as the recovery normally takes, then returns with the in-flight status, Processing.
   */
  async landing(id: string): Promise<Landing> {
    const current = await this.sessions.current(id);
    const { session, transaction } = current;
    if (session.status === 'Created') {
      return {
        kind: 'authenticate',
        sessionId: session.id,
        requestId: transaction.requestId,
        verifiesCard: transaction.operationType === 'Verification',
      };
    }
    const unknown = outcomeUnknown(transaction);
    if (unknown && Date.now() < this.recoveredBy(session.challengeCompletedAt ?? session.updatedAt)) {
      return { kind: 'settling' };
    }
    const status = unknown ? 'Processing' : transaction.status;
    const url = returnUrlOf(transaction, status);
    return url ? { kind: 'return', url } : { kind: 'outcome', ended: current, status };
  }

  /**
   * When the recovery has normally settled a payment sent to the acquirer at `sent`: its first sweep
   * after ACQUIRER_RECOVERY_AFTER_MS, one more, and the acquirer's lookup.
   */
  private recoveredBy(sent: Date): number {
    const { ACQUIRER_RECOVERY_AFTER_MS, ACQUIRER_RECOVERY_SWEEP_MS, ACQUIRER_TIMEOUT_MS } = this.config;
    return sent.getTime() + ACQUIRER_RECOVERY_AFTER_MS + 2 * ACQUIRER_RECOVERY_SWEEP_MS + ACQUIRER_TIMEOUT_MS;
  }

  /**
   * Our notification URL: the issuer's 3DS Method ran, or its challenge ended (CRes). The outcome
   * passed on is the session's own, not the one the posted CRes claims ('C' while still open).
   */
  async notification(form: { threeDSMethodData?: string; cres?: string }): Promise<Notification> {
    if (form.cres) {
      const cres = decodeChallengeResponse(form.cres);
      const { session } = await this.sessions.current(cres.threeDSServerTransID);
      if (session.acsTransId !== cres.acsTransID.toLowerCase()) {
        throw ApiError.notFound(`3DS challenge ${cres.acsTransID}`);
      }
      return {
        type: 'byrd-3ds-challenge-complete',
        id: session.id,
        transStatus: session.transStatus ?? 'C',
      };
    }
    if (form.threeDSMethodData) {
      return {
        type: 'byrd-3ds-method-complete',
        id: decodeMethodData(form.threeDSMethodData).threeDSServerTransID,
      };
    }
    throw ApiError.invalidField('cres', 'cres or threeDSMethodData is required');
  }
}

/**
 * Whether the payment's outcome is still to come: not sent yet, at the acquirer (committed before
 * the call: write-ahead), or its answer lost (TemporaryFailed, acquirerPendingSince still set: the
 * recovery settles it from what the acquirer recorded).
 */
function outcomeUnknown(transaction: Transaction): boolean {
  return (
    transaction.status === 'Created' ||
    transaction.status === 'Processing' ||
    transaction.acquirerPendingSince !== null
  );
}
