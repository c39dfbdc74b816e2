import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
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
