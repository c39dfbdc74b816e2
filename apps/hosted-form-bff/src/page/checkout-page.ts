import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorKind } from '@byrd/platform';
import { pageSecurityHeaders, type PagePolicyOptions } from './security-headers.js';

export const PAGE_PREFIX = '/checkout/';

/** Vite's content-hashed output: a changed file gets a new name, so it may be cached forever. */
const HASHED_ASSETS = `${path.sep}assets${path.sep}`;

export interface CheckoutPageOptions extends PagePolicyOptions {
  /** The built page (index.html, assets/). */
  webDir: string;
  /** The `frame-ancestors` of one order's page (`/checkout/o/{orderId}/`). */
  orderFrameAncestors(orderId: string): Promise<string>;
  /** Counts a request for one order's page in its client's API limit; throws 429 past it. */
  countRequest(request: FastifyRequest): Promise<void>;
}

/**
 * The hosted form's static page under /checkout/: `index.html` (never cached: it names the current
 * assets) and the hashed `assets/*` (cached for a year, immutable), all with the page's security
 * headers. `/checkout` redirects to `/checkout/` so the page's relative API calls resolve under it.
 */
export async function checkoutPage(fastify: FastifyInstance, options: CheckoutPageOptions): Promise<void> {
  const headers = pageSecurityHeaders(options);
  const secure = (reply: FastifyReply) => {
    for (const [name, value] of Object.entries(headers)) void reply.header(name, value);
  };

  await fastify.register(fastifyStatic, {
    root: options.webDir,
    prefix: PAGE_PREFIX,
    index: false,
    wildcard: true,
    dotfiles: 'ignore',
    cacheControl: false,
    setHeaders: (reply: FastifyReply, file: string) => {
      secure(reply);
      void reply.header(
        'cache-control',
        file.includes(HASHED_ASSETS)
          ? 'public, max-age=31536000, immutable'
          : file.endsWith('.html')
            ? 'no-store'
            : 'public, max-age=300',
      );
    },
  });

  fastify.get(PAGE_PREFIX, (_request, reply) => {
    secure(reply);
    return reply.header('cache-control', 'no-store').sendFile('index.html', options.webDir);
  });
  // The same page for one order, framed only by that order's merchant (the page moves here when it
  // finds itself in a frame: the order id is in the fragment, which never reaches the server).
  // (Read and sent as is: sendFile would apply the page-wide headers above over the order's own.)
  // It asks orders and the merchants bucket on every load, so it counts in the client's API limit.
  fastify.get<{ Params: { orderId: string } }>(`${PAGE_PREFIX}o/:orderId/`, async (request, reply) => {
    let frameAncestors: string;
    try {
      await options.countRequest(request);
      frameAncestors = await options.orderFrameAncestors(request.params.orderId);
    } catch (error) {
      return sendUnavailablePage(reply, error);
    }
    const html = await readFile(path.join(options.webDir, 'index.html'));
    return reply
      .headers(pageSecurityHeaders({ ...options, frameAncestors }))
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(html);
  });
  fastify.get(PAGE_PREFIX.slice(0, -1), (request, reply) => {
    const query = request.url.indexOf('?');
    return reply.redirect(`${PAGE_PREFIX}${query >= 0 ? request.url.slice(query) : ''}`, 301);
  });
}

/**
 * What a shopper sees in the merchant's frame when one order's page cannot be served now (over the
 * client's limit, or orders or the merchants bucket not answering): a short HTML page, not the API's
 * JSON error body, with Retry-After. It may be framed anywhere: it holds no data, no script and no
 * action, and the sites allowed to frame the order are exactly what could not be looked up.
 */
function sendUnavailablePage(reply: FastifyReply, error: unknown): FastifyReply {
  const limit = error instanceof ApiError && error.kind === ErrorKind.RateLimited ? error : undefined;
  if (!limit) logger.warn(`The order's page could not be served: ${String(error)}`);
  return reply
    .status(limit ? 429 : 503)
    .headers({
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors *",
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      'retry-after': String(limit?.retryAfter ?? UNAVAILABLE_RETRY_AFTER_S),
    })
    .type('text/html; charset=utf-8')
    .send(limit ? TOO_MANY_REQUESTS_PAGE : UNAVAILABLE_PAGE);
}

const UNAVAILABLE_RETRY_AFTER_S = 5;
const logger = new Logger('CheckoutPage');

// No "try again" link: a reload of the frame's address would lose its fragment (the order, its
// key and options); the shop's page sets the frame up again. No claim that nothing was charged
// either: the shopper may be reloading after paying.
const messagePage = (title: string, text: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>body{font-family:system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;color:#1f2937}
main{max-width:28rem;padding:1.5rem;text-align:center}</style></head>
<body><main><h1>${title}</h1><p>${text}</p>
<p>If you have already paid, do not pay again: the shop will confirm your payment.</p></main></body></html>
`;
const UNAVAILABLE_PAGE = messagePage(
  'Payment page unavailable',
  'The payment page cannot be shown right now. Please reload the page in a moment.',
);
const TOO_MANY_REQUESTS_PAGE = messagePage(
  'Too many requests',
  'This payment page was opened too many times in a short while. Please reload the page in a minute.',
);
