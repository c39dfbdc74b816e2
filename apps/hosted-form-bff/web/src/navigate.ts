// Leaving the form for the merchant's redirectUrl, standalone or inside the merchant's iframe.

export interface RedirectParams {
  orderId: string;
  status: string;
  transactionId?: string;
}

/** `redirectUrl` with `orderId`, `status` (and the payment's `transactionId`) added to its query. */
export function redirectTarget(redirectUrl: string, params: RedirectParams): string {
  const url = new URL(redirectUrl);
  url.searchParams.set('orderId', params.orderId);
  if (params.transactionId) url.searchParams.set('transactionId', params.transactionId);
  url.searchParams.set('status', params.status);
  return url.href;
}

/**
 * Sends the shopper to the merchant. Inside an iframe, the embedding page is told first
 * (`postMessage`, no card data) and the whole tab moves on when the browser lets the frame
 * navigate it; otherwise the frame itself does.
 */
export function leaveTo(url: string, params: RedirectParams): void {
  if (window.top !== window.self) {
    window.parent.postMessage({ type: 'byrd-checkout', event: 'redirect', url, ...params }, '*');
    try {
      window.top!.location.href = url;
      return;
    } catch {
      // The merchant's sandbox attribute or the browser refused top navigation: stay in the frame.
    }
  }
  window.location.assign(url);
}
