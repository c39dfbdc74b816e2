// 3D Secure inside the page: the payments service's browser SDK (an ES module at
// `CheckoutOrderView.threeDSecureSdkUrl`) runs the issuer's steps, with the challenge in our container.
import type { CheckoutPaymentView } from '@byrd/contracts/browser';
import type { CheckoutApi } from './api.js';
import { timing } from './timings.js';

interface AuthenticateOptions {
  id: string;
  requestId?: string;
  container: HTMLElement;
  onProgress?: (step: string) => void;
}

interface ThreeDSSdk {
  authenticate(options: AuthenticateOptions): Promise<{ status: string; paymentStatus?: string }>;
}

async function loadSdk(url: string): Promise<ThreeDSSdk> {
  const module = (await import(/* @vite-ignore */ url)) as { ByrdThreeDS?: ThreeDSSdk; default?: ThreeDSSdk };
  const sdk = module.ByrdThreeDS ?? module.default;
  if (!sdk || typeof sdk.authenticate !== 'function') throw new Error(`no authenticate() in ${url}`);
  return sdk;
}

/**
 * Runs the bank's authentication of a payment answered BYRD207; `onChallenge` fires when the bank
 * shows its challenge. Resolves with the authentication status (`Authorized`, `Unauthorized`, ...),
 * or null when the flow broke off (the payment is read afterwards either way).
 */
export async function authenticateWithBank(
  sdkUrl: string,
  payment: CheckoutPaymentView,
  container: HTMLElement,
  onChallenge: () => void,
): Promise<string | null> {
  const threeDSecure = payment.threeDSecure!;
  try {
    const sdk = await loadSdk(sdkUrl);
    const result = await sdk.authenticate({
      id: threeDSecure.id,
      requestId: threeDSecure.requestId,
      container,
      onProgress: (step) => {
        if (step === 'challenge') onChallenge();
      },
    });
    return result.status;
  } catch (error) {
    console.warn('[checkout] 3-D Secure did not complete', error);
    return null;
  }
}

/** Not yet answered by the acquirer: right after 3DS the payment gets there within seconds. */
const BEFORE_ACQUIRER_ANSWER = new Set(['Created', 'Processing']);

/**
 * Reads the payment briefly, until the acquirer has answered. The answer may be "not known yet"
 * (TemporaryFailed): that payment, like one still at the acquirer after this wait, is the
 * processing page's to follow.
 */
export async function waitForOutcome(api: CheckoutApi, transactionId: string): Promise<CheckoutPaymentView> {
  let payment = await api.getPayment(transactionId);
  for (let attempt = 0; attempt < 8 && BEFORE_ACQUIRER_ANSWER.has(payment.status); attempt++) {
    await new Promise((resolve) => window.setTimeout(resolve, timing('outcomeEveryMs')));
    payment = await api.getPayment(transactionId);
  }
  return payment;
}
