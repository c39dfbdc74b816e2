import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { pageSecurityHeaders, type PagePolicyOptions } from './security-headers.js';

export const PAGE_PREFIX = '/checkout/';

/** Vite's content-hashed output: a changed file gets a new name, so it may be cached forever. */
const HASHED_ASSETS = `${path.sep}assets${path.sep}`;

export interface CheckoutPageOptions extends PagePolicyOptions {
  /** The built page (index.html, assets/). */
  webDir: string;
  /** The `frame-ancestors` of one order's page (`/checkout/o/{orderId}/`). */
  orderFrameAncestors(orderId: string): Promise<string>;
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
  fastify.get<{ Params: { orderId: string } }>(`${PAGE_PREFIX}o/:orderId/`, async (request, reply) => {
    const frameAncestors = await options.orderFrameAncestors(request.params.orderId);
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
