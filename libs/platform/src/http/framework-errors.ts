import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '@byrd/contracts';
import { ApiError } from '../errors/api-error.js';
import { toErrorResponse } from '../errors/error-body.js';

/** Longest path segment the router takes (find-my-way's default); ids are GUIDs, far shorter. */
export const MAX_PATH_PARAM_LENGTH = 100;

/**
 * Fastify's router refuses some requests before any route, hook or Nest filter runs (a path that
 * does not decode as UTF-8, a path segment over the limit) and would answer them in its own body.
 * They get ours instead, with the request id, so every refusal reads the same to a client.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const refusal =
    error.code === 'FST_ERR_BAD_URL'
      ? ApiError.invalid('The request path is not valid: it does not decode as UTF-8')
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? ApiError.invalid(`A path segment is longer than ${MAX_PATH_PARAM_LENGTH} characters`)
        : error;
  const response = toErrorResponse(refusal, String(request.id));
  void reply
    .status(response.status)
    .headers({ ...response.headers, 'x-request-id': String(request.id) })
    .send(response.body);
}

/**
 * Node's HTTP parser refuses some requests before Fastify sees them (headers over 16 KB, a control
 * byte in a header, a request that arrives too slowly): answered in our error body too, as Fastify's
 * own handler would otherwise answer them in its, with a fresh request id (there is no request).
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers exceed the 16 KB limit']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request did not arrive in time']
        : [400, 'The request is malformed'];
  const requestId = randomUUID();
  const body = JSON.stringify(errorBody('BYRD900', message, requestId));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
