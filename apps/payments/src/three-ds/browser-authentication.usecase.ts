import { Inject, Injectable } from '@nestjs/common';
import type {
  ThreeDSAuthRequest,
  ThreeDSAuthResponse,
  ThreeDSPostAuthResponse,
  ThreeDSPreAuthRequest,
  ThreeDSPreAuthResponse,
} from '@byrd/contracts';
import { ApiError, Refusal } from '@byrd/platform';
import { AuthenticationSessions, type SessionWithPayment } from './authentication-sessions.js';
import { decodeChallengeResponse, decodeMethodData } from './emv-messages.js';
import { ThreeDSLinks } from './three-ds-links.js';
import { THREE_DS_PROVIDER, type ThreeDSProvider } from '../three-ds-server/three-ds-provider.js';
import { presentAuth, presentPostAuth, presentPreAuth, returnUrlOf } from './three-ds.presenter.js';

/** Where `action.url` takes the shopper: through the flow, back to the shop, or to the outcome. */
export type Landing =
  | { kind: 'authenticate'; sessionId: string; requestId: string; verifiesCard: boolean }
  | { kind: 'return'; url: string }
  | { kind: 'outcome'; ended: SessionWithPayment };

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
    if (
      transaction.status === 'Created' ||
      transaction.status === 'Processing' ||
      transaction.acquirerPendingSince !== null
    ) {
      throw Refusal.awaitingShopper('The payment is being processed');
    }
    return presentPostAuth(session, transaction);
  }

  /** `GET /3ds/authenticate/{id}`: run the flow, or, once it has ended, return to the shop at once. */
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
    const url = returnUrlOf(transaction);
    return url ? { kind: 'return', url } : { kind: 'outcome', ended: current };
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
