import type { TransactionStatus } from '@byrd/contracts';
import type { ErrorResponse } from '@byrd/platform';
import type { SessionWithPayment } from '../authentication-sessions.js';
import { html, type Page } from './html.js';

// Our 3DS server's own pages: action.url, the notification target, the outcome and errors.

/**
 * `action.url`: runs the SDK flow in the page, then reloads itself; the ended session then answers
 * with the redirect to the shop, so the return address is built in one place (the server).
 */
export function authenticatePage(
  session: { sessionId: string; requestId: string; verifiesCard: boolean },
  acsOrigin: string,
): Page {
  const what = session.verifiesCard ? 'card' : 'payment';
  return {
    title: `Verifying your ${what}`,
    body: html`<main data-session-id="${session.sessionId}" data-request-id="${session.requestId}">
      <h1>Verifying your ${what}</h1>
      <p id="status" role="status" aria-live="polite">Contacting your bank…</p>
      <div id="challenge" class="frame"></div>
      <p id="retry" hidden><a href="">Try again</a></p>
    </main>`,
    script: `import { authenticate } from '../sdk.js';
const main = document.querySelector('main');
const status = document.getElementById('status');
try {
  await authenticate({
    id: main.dataset.sessionId,
    requestId: main.dataset.requestId,
    container: document.getElementById('challenge'),
    onProgress: (step) => {
      if (step === 'challenge') status.textContent = 'Your bank asks you to confirm the ${what}.';
    },
  });
  status.textContent = 'Verification finished. Returning to the shop…';
  location.replace(location.href);
} catch (error) {
  // Still 409 when the SDK stops asking: the payment's outcome is not known yet, this page waits for it.
  if (error?.status === 409) location.replace(location.href);
  else {
    status.textContent = 'We could not complete the verification with your bank.';
    document.getElementById('retry').hidden = false;
  }
}`,
    sources: {
      scripts: ["'self'"],
      connect: ["'self'"],
      frames: ["'self'", acsOrigin],
      formAction: ["'self'", acsOrigin],
    },
  };
}

const SETTLING_RELOAD_MS = 2_000;

/** Shown while the payment's outcome is not known yet: it reloads itself until `action.url` moves on. */
export function settlingPage(): Page {
  return {
    title: 'Confirming your payment',
    body: html`<main>
      <h1>Confirming your payment</h1>
      <p role="status" aria-live="polite">
        Your bank is confirming the payment. Please wait, and do not pay again: this page moves on by itself.
      </p>
    </main>`,
    script: `setTimeout(() => location.replace(location.href), ${SETTLING_RELOAD_MS});`,
  };
}

/**
 * The end of the flow when the payment has no redirectUrl to return to. `status` is the
 * transaction's, or Processing while its outcome is still unknown (never shown as a failure).
 */
export function outcomePage({ session, transaction }: SessionWithPayment, status: TransactionStatus): Page {
  const paid = status === 'Success';
  const processing = status === 'Processing';
  const heading = paid
    ? 'Payment successful'
    : processing
      ? 'Payment being processed'
      : 'Payment not completed';
  return {
    title: heading,
    body: html`<main>
      <h1 class="${paid ? 'ok' : processing ? '' : 'fail'}">${heading}</h1>
      ${processing ? html`<p>Your bank has not confirmed it yet. Do not pay again: the shop will confirm it.</p>` : ''}
      <dl>
        <dt>Status</dt>
        <dd>${status}</dd>
        <dt>Verification</dt>
        <dd>${session.status}</dd>
        <dt>Transaction</dt>
        <dd>${transaction.id}</dd>
      </dl>
      <p>You can close this window.</p>
    </main>`,
  };
}

/**
 * Our notification URL's answer, inside the SDK's iframe: tells the page that framed it that the
 * 3DS Method ran or the challenge ended (the SDK still reads the outcome from postAuth).
 */
export function notificationPage(message: {
  type: 'byrd-3ds-method-complete' | 'byrd-3ds-challenge-complete';
  id: string;
  transStatus?: string;
}): Page {
  const challenge = message.type === 'byrd-3ds-challenge-complete';
  return {
    title: challenge ? 'Verification finished' : 'Device check finished',
    body: html`<main
      data-type="${message.type}"
      data-id="${message.id}"
      data-trans-status="${message.transStatus ?? ''}"
    >
      <p role="status">
        ${challenge ? 'Verification finished. Returning to the shop…' : 'Device check finished.'}
      </p>
    </main>`,
    script: `const { type, id, transStatus } = document.querySelector('main').dataset;
if (window.parent !== window) {
  window.parent.postMessage(transStatus ? { type, id, transStatus } : { type, id }, '*');
}`,
  };
}

export function errorPage(error: ErrorResponse): Page {
  // A 404's message quotes the id the address carried, an invalid input's the names of the fields a
  // form post carried (anyone's site may post one here): a page on our domain must not show a
  // stranger's words to a shopper (content spoofing). The reference finds them in the log.
  const notFound = error.status === 404;
  const invalid = error.body.code === 'BYRD900';
  return {
    status: error.status,
    title: notFound ? 'Not found' : 'Something went wrong',
    body: html`<main>
      <h1>${notFound ? 'This verification was not found' : 'Something went wrong'}</h1>
      ${notFound ? '' : html`<p>${invalid ? 'This page was sent data it cannot read.' : error.body.message}</p>`}
      <p class="hint">Reference: ${error.body.requestId}</p>
    </main>`,
  };
}
