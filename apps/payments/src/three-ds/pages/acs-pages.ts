import type { ChallengeEnd, ChallengeView, MethodOutcome } from '../sandbox-acs.usecase.js';
import { html, httpOrigin, type Page } from './html.js';

// The sandbox issuer's pages, shown inside the SDK's iframes.

/** The 3DS Method target: posts `threeDSMethodData` back to the 3DS server, if it asked for it. */
export function methodPage(outcome: MethodOutcome): Page {
  const target = outcome.notificationUrl;
  return {
    title: 'Checking your device',
    body: html`<main>
      <p>Checking your device…</p>
      ${
        target
          ? html`<form id="notify" method="post" action="${target}">
              <input type="hidden" name="threeDSMethodData" value="${outcome.threeDSMethodData}" />
            </form>`
          : ''
      }
    </main>`,
    script: target ? `document.getElementById('notify').submit();` : undefined,
    sources: { formAction: target ? [httpOrigin(target)!] : [] },
  };
}

/** The challenge: what is being paid, the code field, Submit and Cancel. */
export function challengePage(view: ChallengeView): Page {
  const card = view.cardLast4 ? `${view.brand ?? 'Card'} ending in ${view.cardLast4}` : null;
  const title = view.amount === null ? 'Confirm your card' : 'Confirm your payment';
  return {
    title,
    body: html`<main>
      ${view.sandbox ? html`<p class="sandbox" role="note">Sandbox bank: no real money moves.</p>` : ''}
      <h1>${title}</h1>
      <p>
        ${
          view.amount === null
            ? 'Your bank asks you to confirm this card is yours, so it can be saved. Nothing is charged.'
            : 'Your bank asks you to confirm this purchase.'
        }
      </p>
      <dl>
        ${
          view.merchantName
            ? html`<dt>Merchant</dt>
                <dd>${view.merchantName}</dd>`
            : ''
        }
        ${
          view.amount !== null
            ? html`<dt>Amount</dt>
                <dd>${view.amount} ${view.currency}</dd>`
            : ''
        }
        ${
          card
            ? html`<dt>Card</dt>
                <dd>${card}</dd>`
            : ''
        }
        ${
          view.reference
            ? html`<dt>Reference</dt>
                <dd>${view.reference}</dd>`
            : ''
        }
      </dl>
      <form method="post" action="${view.answerUrl}">
        <input type="hidden" name="threeDSServerTransID" value="${view.threeDSServerTransID}" />
        <label for="otp">One-time code</label>
        <input
          id="otp"
          name="otp"
          type="text"
          inputmode="numeric"
          autocomplete="one-time-code"
          maxlength="8"
          required
          autofocus
          aria-describedby="otp-hint"
        />
        <p id="otp-hint" class="hint">
          ${
            view.sandbox
              ? 'Sandbox: enter 1234 to confirm; any other code is refused.'
              : 'Enter the code your bank sent you.'
          }
        </p>
        <div class="actions">
          <button class="primary" type="submit" name="action" value="submit">Submit</button>
          <button type="submit" name="action" value="cancel" formnovalidate>Cancel</button>
        </div>
      </form>
    </main>`,
    sources: { formAction: ["'self'", httpOrigin(view.answerUrl)!] },
  };
}

/** A CReq opens the challenge, or shows the outcome of one that has already ended. */
export function challengeStepPage(step: ChallengeView | ChallengeEnd): Page {
  return 'cres' in step ? challengeEndPage(step) : challengePage(step);
}

/**
 * The outcome of the verification, then the CRes posted to the 3DS server's notification URL (EMV),
 * which tells the SDK. The issuer's page speaks only for the verification: the acquirer may still
 * decline the payment it allowed, and the shop shows that outcome.
 */
export function challengeEndPage(end: ChallengeEnd): Page {
  const title = end.authenticated ? 'Verification complete' : 'Verification failed';
  return {
    title,
    body: html`<main>
      <h1 class="${end.authenticated ? 'ok' : 'fail'}">${title}</h1>
      <p role="status">Returning to the shop…</p>
      <form id="cres" method="post" action="${end.notificationUrl}">
        <input type="hidden" name="cres" value="${end.cres}" />
        <noscript><button class="primary" type="submit">Continue</button></noscript>
      </form>
    </main>`,
    script: `document.getElementById('cres').submit();`,
    sources: { formAction: [httpOrigin(end.notificationUrl)!] },
  };
}
