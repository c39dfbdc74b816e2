import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Logger } from 'pino';
import { context, trace, type Context } from '@opentelemetry/api';
import { loggableUrl } from '../logging/loggable-url.js';
import { withRequestLog } from '../logging/logging.js';
import {
  contextFromHeaders,
  failSpan,
  SpanKind,
  startSpan,
  traceparentOf,
  type Span,
} from '../tracing/tracing.js';

const SPAN = Symbol('byrd.span');
const CONTEXT = Symbol('byrd.context');
type ObservedRequest = FastifyRequest & { [SPAN]?: Span; [CONTEXT]?: Context };

/**
 * What operators see of each HTTP request: a server span, child of the caller's `traceparent` when
 * it sent one, and one log line when it is answered. Every answer names its request
 * (`x-request-id`) and its trace (`traceparent`), so a merchant can quote either to support. Span
 * and log fields live in one context, entered at the first hook: Fastify carries it through the
 * body's parsing (an AsyncResource of the request's) into the handler, so every line the handler
 * writes names the request and its trace.
 */
export function observeRequests(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('onRequest', (request: ObservedRequest, reply, done) => {
    // Spans and logs see the URL with its card numbers and credentials censored.
    const url = loggableUrl(request.url);
    const span = startSpan(`${request.method}`, SpanKind.SERVER, contextFromHeaders(request.headers), {
      'http.request.method': request.method,
      'url.path': url.split('?', 1)[0],
    });
    const requestContext = withRequestLog(trace.setSpan(context.active(), span), {
      id: String(request.id),
      method: request.method,
      url,
    });
    request[SPAN] = span;
    request[CONTEXT] = requestContext;
    void reply.header('x-request-id', request.id);
    const traceparent = traceparentOf(span);
    if (traceparent) void reply.header('traceparent', traceparent);
    context.with(requestContext, done);
  });
  // The route pattern names the span (never the raw path: ids would make every name unique).
  fastify.addHook('onRoute', (route) => {
    const name = `${route.method.toString()} ${route.url}`;
    const named: onRequestHookHandler = (request: ObservedRequest, _reply, done) => {
      request[SPAN]?.updateName(name).setAttribute('http.route', route.url);
      done();
    };
    route.onRequest = [...[route.onRequest ?? []].flat(), named];
  });
  fastify.addHook('onResponse', (request: ObservedRequest, reply, done) => {
    const span = request[SPAN];
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) failSpan(span, new Error(`answered ${reply.statusCode}`));
    }
    // Probes poll /health every few seconds: their lines would drown the requests'.
    if (!request.url.startsWith('/health')) {
      const line = { res: { statusCode: reply.statusCode }, responseTime: Math.round(reply.elapsedTime) };
      within(request, () =>
        reply.statusCode >= 500
          ? logger.error(line, 'request errored')
          : logger.info(line, 'request completed'),
      );
    }
    span?.end();
    done();
  });
  fastify.addHook('onRequestAbort', (request: ObservedRequest, done) => {
    request[SPAN]?.setAttribute('http.request.aborted', true).end();
    within(request, () => logger.info('request aborted'));
    done();
  });
}

/** Runs `work` in the request's context (trace and log fields), when it has one. */
function within(request: ObservedRequest, work: () => void): void {
  const requestContext = request[CONTEXT];
  if (requestContext) context.with(requestContext, work);
  else work();
}
