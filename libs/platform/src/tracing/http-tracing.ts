import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import {
  contextFromHeaders,
  failSpan,
  SpanKind,
  startSpan,
  traceparentOf,
  withSpan,
  type Span,
} from './tracing.js';

const SPAN = Symbol('byrd.span');
type TracedRequest = FastifyRequest & { [SPAN]?: Span };

/**
 * A server span per HTTP request, child of the caller's `traceparent` when it sent one; the answer
 * carries the request's own `traceparent`, so a merchant can quote the trace as well as the request
 * id. The span is made current again before the handler (the body is read in the socket's context,
 * not the request's), so the handler's logs, calls and events belong to it.
 */
export function traceRequests(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request: TracedRequest, reply, done) => {
    const span = startSpan(`${request.method}`, SpanKind.SERVER, contextFromHeaders(request.headers), {
      'http.request.method': request.method,
      'url.path': request.url.split('?', 1)[0],
    });
    request[SPAN] = span;
    const traceparent = traceparentOf(span);
    if (traceparent) void reply.header('traceparent', traceparent);
    withSpan(span, done);
  });
  // The route pattern names the span (never the raw path: ids would make every name unique).
  fastify.addHook('onRoute', (route) => {
    const name = `${route.method.toString()} ${route.url}`;
    const named: onRequestHookHandler = (request: TracedRequest, _reply, done) => {
      request[SPAN]?.updateName(name).setAttribute('http.route', route.url);
      done();
    };
    route.onRequest = [...[route.onRequest ?? []].flat(), named];
  });
  fastify.addHook('preHandler', (request: TracedRequest, _reply, done) => {
    const span = request[SPAN];
    if (span) withSpan(span, done);
    else done();
  });
  fastify.addHook('onResponse', (request: TracedRequest, reply, done) => {
    const span = request[SPAN];
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) failSpan(span, new Error(`answered ${reply.statusCode}`));
      span.end();
    }
    done();
  });
  fastify.addHook('onRequestAbort', (request: TracedRequest, done) => {
    request[SPAN]?.setAttribute('http.request.aborted', true).end();
    done();
  });
}
