// The page's own waits: fixed for shoppers. The browser tests shorten them (Playwright's
// addInitScript sets `window.byrdCheckoutTimings` before the page's scripts run) so that they do not
// sit out seconds that test nothing; no merchant or link can set them (the page is on our origin).

export interface CheckoutTimings {
  /** Between two reads of a payment or order the page follows (follow.ts). */
  followEveryMs: number;
  /** Long enough to read "Payment successful" before the merchant's page loads. */
  leaveDelayMs: number;
  /** Between two reads of a payment right after 3DS, until the acquirer has answered (three-ds.ts). */
  outcomeEveryMs: number;
  /** Between two reads of the order after a success, until it shows the payment (follow.ts). */
  orderShowsPaymentEveryMs: number;
  /** The most a success waits for its order to show it before the shopper leaves anyway. */
  orderShowsPaymentWaitMs: number;
}

const DEFAULT_TIMINGS: CheckoutTimings = {
  followEveryMs: 2500,
  leaveDelayMs: 900,
  outcomeEveryMs: 1500,
  // Every read counts in the shopper address's rate limit (RATE_LIMIT_MAX a minute): at most 20.
  orderShowsPaymentEveryMs: 500,
  orderShowsPaymentWaitMs: 10_000,
};

declare global {
  interface Window {
    byrdCheckoutTimings?: Partial<CheckoutTimings>;
  }
}

/** One of the page's waits: the default, or a test's override when it is a number of ms. */
export function timing(name: keyof CheckoutTimings): number {
  const override = window.byrdCheckoutTimings?.[name];
  return typeof override === 'number' && Number.isFinite(override) && override >= 0
    ? override
    : DEFAULT_TIMINGS[name];
}
