/** What the page's Content-Security-Policy depends on. */
export interface PagePolicyOptions {
  /** The 3DS browser SDK; its origin serves the SDK's API, the 3DS method and the challenge pages. */
  threeDSecureSdkUrl: string;
  /** CSP `frame-ancestors` sources: who may embed the form. */
  frameAncestors: string;
}

/**
 * The page's Content-Security-Policy. Scripts, styles and images come from the page's own origin
 * (Vite emits external files only); the 3DS SDK origin may run its module, be called, be framed
 * (the 3DS method and the issuer's challenge) and receive the SDK's form posts. No inline script
 * or style, no plugins, no `<base>`, and only the configured sites may frame the form.
 */
export function contentSecurityPolicy(options: PagePolicyOptions): string {
  const sdk = new URL(options.threeDSecureSdkUrl).origin;
  return [
    "default-src 'self'",
    `script-src 'self' ${sdk}`,
    `connect-src 'self' ${sdk}`,
    `frame-src ${sdk}`,
    `form-action ${sdk}`,
    "img-src 'self' data:",
    "style-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    `frame-ancestors ${options.frameAncestors}`,
  ].join('; ');
}

/**
 * Headers of every page response. No X-Frame-Options: it cannot list several embedders and DENY
 * would forbid the iframe merchants use; `frame-ancestors` decides instead.
 */
export function pageSecurityHeaders(options: PagePolicyOptions): Record<string, string> {
  return {
    'content-security-policy': contentSecurityPolicy(options),
    // The page's address carries the checkout key (in its fragment today; never let a query leak).
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };
}
