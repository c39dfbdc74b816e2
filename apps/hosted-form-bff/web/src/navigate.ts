// Leaving the form for the merchant's redirectUrl, standalone or inside the merchant's iframe.
import { isHttpUrl } from './link.js';

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

/** Whether `url` is an http(s) address on one of `origins`. */
export function isAllowedTarget(url: string, origins: readonly string[]): boolean {
  return isHttpUrl(url) && origins.includes(new URL(url).origin);
}

/**
 * Sends the shopper to the merchant. Inside an iframe, the embedding page is told first
 * (`postMessage`, no card data, and only to the merchant's allowed origins: the browser drops it
 * for a parent on any other) and the whole tab moves on when the browser lets the frame navigate
 * it; otherwise the frame itself does.
 */
export function leaveTo(url: string, params: RedirectParams, allowedOrigins: readonly string[]): void {
  if (window.top !== window.self) {
    const message = { type: 'byrd-checkout', event: 'redirect', url, ...params };
    for (const origin of allowedOrigins) window.parent.postMessage(message, origin);
    try {
      window.top!.location.href = url;
      return;
    } catch {
      // The merchant's sandbox attribute or the browser refused top navigation: stay in the frame.
    }
  }
  window.location.assign(url);
}

/**
 * Where a framed form must be for its order's CSP to apply: `{base}o/{orderId}/` with the same
 * fragment, or null when it is there already, is not framed, or the link names no order. `orderId`
 * is the one readCheckoutLink read: the order the page would render.
 */
export function framedOrderPage(
  location: { pathname: string; search: string; hash: string },
  framed: boolean,
  base: string,
  orderId: string | null,
): string | null {
  if (!framed || !orderId) return null;
  const path = `${base}o/${orderId}/`;
  return location.pathname === path ? null : `${path}${location.search}${location.hash}`;
}
