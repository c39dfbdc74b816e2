import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, type NestMiddleware } from '@nestjs/common';

/** What a page may always send: JSON and its idempotency-key (and its own request id). */
const ALLOWED_HEADERS = ['content-type', 'idempotency-key', 'x-request-id'];
/** Never allowed from a browser: a merchant's secret key. */
const API_KEY_HEADER = 'x-api-key';
/** What a page may read of an answer besides the body (a 429's or 503's wait, a replayed answer). */
const EXPOSED_HEADERS = 'x-request-id, retry-after, idempotent-replayed';

/**
 * Cross-origin access to the `?checkoutKey=` payment routes: a merchant's page pays its order from
 * the shopper's browser (the SDK's routes). The checkout key in the URL is the only credential, so
 * any origin may call them and no cookie is ever allowed (`*`, no allow-credentials). A request with
 * an `x-api-key` gets no CORS header, and no preflight lets one through: a merchant's secret key
 * belongs in its backend, and a browser must not be able to use it.
 */
@Injectable()
export class CheckoutBrowserAccessMiddleware implements NestMiddleware {
  use(req: IncomingMessage, res: ServerResponse, next: () => void): void {
    // An empty x-api-key is none, as for ApiKeyGuard.
    if (!hasCheckoutKey(req.url) || req.headers[API_KEY_HEADER]) return next();
    res.setHeader('access-control-allow-origin', '*');
    if (req.method !== 'OPTIONS') {
      // Set before the route runs, so its refusals (400, 404, 429) reach the page readable too.
      res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
      return next();
    }
    res.setHeader('access-control-allow-methods', 'POST');
    res.setHeader(
      'access-control-allow-headers',
      allowedHeaders(req.headers['access-control-request-headers']),
    );
    res.setHeader('access-control-max-age', '600');
    res.statusCode = 204;
    res.end();
  }
}

function hasCheckoutKey(url = ''): boolean {
  const start = url.indexOf('?');
  return start >= 0 && Boolean(new URLSearchParams(url.slice(start + 1)).get('checkoutKey'));
}

/**
 * The headers the preflight asked for (as the 3DS middleware allows them: a client's own headers, such
 * as the public SDKs' `x-attempt`, must not fail it), less `x-api-key`, plus the ones always allowed.
 */
function allowedHeaders(requested: string | undefined): string {
  const asked = (requested ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => /^[a-z0-9-]+$/.test(name) && name !== API_KEY_HEADER);
  return [...new Set([...ALLOWED_HEADERS, ...asked])].join(', ');
}
