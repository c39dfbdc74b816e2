import { z } from 'zod';
import { parseSigningKey, paymentAttemptLimitSettings, statelessConfigSchema } from '@byrd/platform';

/**
 * One CSP source expression of `frame-ancestors`: `'self'`, `'none'`, a scheme (`https:`) or a host
 * source (`https://shop.example.com`, `https://*.example.com:8443`). Anything else (`;`, `,`,
 * quotes, keywords of other directives) could break out of the directive, so it is refused.
 */
const FRAME_ANCESTOR_SOURCE =
  /^(?:'self'|'none'|[a-z][a-z0-9+.-]*:|(?:[a-z][a-z0-9+.-]*:\/\/)?(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*(?::(?:\d{1,5}|\*))?)$/i;

function isSigningKey(value: string): boolean {
  try {
    parseSigningKey(value);
    return true;
  } catch {
    return false;
  }
}

const positiveInt = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

export const checkoutConfigSchema = statelessConfigSchema.extend({
  HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3005),
  /** Longer than the 30 s a shopper's payment may wait for payments: a stopping replica answers it. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(35_000),
  /**
   * Signs this service's `rpc.payments.create` requests (they carry the card): without it no card
   * can be paid, so the service refuses to start rather than fail at the first payment.
   */
  RPC_SIGNING_KEY: z.string().refine(isSigningKey, {
    message: 'must be a base64 Ed25519 private key (PKCS#8 DER)',
  }),
  /**
   * The payments service's 3DS browser SDK, `{payments PUBLIC_BASE_URL}/3ds/sdk.js`. The page imports
   * it for a challenge; its origin is allowed in the page's CSP (script, connect, frame, form-action)
   * because the SDK's API, the 3DS method and the issuer's challenge pages are served from there.
   */
  THREE_DS_SDK_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .default('http://127.0.0.1:8080/3ds/sdk.js'),
  /**
   * Who may embed the form in an iframe: the CSP `frame-ancestors` sources, space-separated. The
   * default `'self' https:` lets any merchant's HTTPS site embed it (the form is meant to be
   * embedded, and merchants' origins are not known in advance) while refusing plain-HTTP, `data:`
   * and `file:` framers; the form only pays the order its merchant created and handed the checkout
   * key for. An operator with a known list of shops narrows it (e.g. `https://shop.example.com`);
   * `'none'` forbids embedding.
   */
  CHECKOUT_FRAME_ANCESTORS: z
    .string()
    .trim()
    .default("'self' https:")
    .refine((v) => v.split(/\s+/).every((source) => FRAME_ANCESTOR_SOURCE.test(source)), {
      message:
        "must be space-separated CSP sources such as 'self', https: or https://shop.example.com (no ; or ,)",
    }),
  /** Bucket, window and payment-attempt limits: defined once, for payments' checkout-key routes too. */
  ...paymentAttemptLimitSettings,
  /** Requests one client IP may make to the API per window (order reads, payment polls, cancel). */
  RATE_LIMIT_MAX: positiveInt(120),
  /**
   * Directory of the built page (`index.html`, `assets/`); default `dist/web` of this package (built
   * by `npm run build -w @byrd/hosted-form-bff`).
   */
  HOSTED_FORM_WEB_DIR: z.string().min(1).optional(),
});

export type CheckoutConfig = z.infer<typeof checkoutConfigSchema>;
export const CHECKOUT_CONFIG = Symbol('CHECKOUT_CONFIG');

/** Set in production, never defaulted (runHttpService refuses to start without them): its RPC identity, the gateway address the page calls. */
export const REQUIRED_IN_PRODUCTION = ['RPC_SIGNING_KEY', 'RPC_TRUSTED_CALLERS', 'PUBLIC_BASE_URL'] as const;
