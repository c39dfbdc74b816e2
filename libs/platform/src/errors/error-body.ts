import { errorBody, type ErrorBody } from '@byrd/contracts';
import { ApiError, ErrorKind, httpStatusOf } from './api-error.js';

export type { ErrorBody };

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** Not a final answer (`ApiError.transient`): an idempotency-key must not keep it. */
  transient: boolean;
}

interface HttpLikeError {
  statusCode?: number;
  status?: number;
  code?: string;
  message?: string;
  getStatus?: () => number;
  getResponse?: () => unknown;
}

/**
 * Turns anything thrown while serving a request into the uniform error body of API-FACTS.md.
 * Unknown failures become BYRD999 with a generic sentence: a stack trace never reaches the client.
 */
export function toErrorResponse(error: unknown, requestId: string): ErrorResponse {
  const apiError = toApiError(error);
  const headers: Record<string, string> = {};
  if (apiError.retryAfter !== undefined) headers['retry-after'] = String(apiError.retryAfter);
  const body = errorBody(apiError.code, apiError.message, requestId, apiError.errors);
  return { status: httpStatusOf(apiError.kind), body, headers, transient: apiError.transient };
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = (error ?? {}) as HttpLikeError;
  const status = e.getStatus?.() ?? e.statusCode ?? e.status;
  switch (status) {
    case 400:
      return ApiError.invalid(httpMessage(e) ?? 'The request is malformed');
    case 401:
      return new ApiError(ErrorKind.Unauthorized, 'A valid x-api-key header is required');
    case 403:
      return new ApiError(ErrorKind.Forbidden, 'This key may not perform the operation');
    case 404:
      return new ApiError(ErrorKind.NotFound, httpMessage(e) ?? 'Resource not found');
    case 405:
      return new ApiError(ErrorKind.NotFound, httpMessage(e) ?? 'Method not allowed');
    case 413:
      return new ApiError(ErrorKind.PayloadTooLarge, 'The request body exceeds the 1 MB limit');
    case 415:
      return ApiError.invalid('Content-Type must be application/json');
    case 429:
      return new ApiError(ErrorKind.RateLimited, 'Too many requests', { retryAfter: 1 });
    default:
      return new ApiError(
        ErrorKind.Internal,
        'An unexpected error occurred; the request id identifies it in our logs',
      );
  }
}

function httpMessage(e: HttpLikeError): string | undefined {
  const response = e.getResponse?.();
  if (response && typeof response === 'object' && 'message' in response) {
    const message = response.message;
    if (typeof message === 'string') return message;
    if (Array.isArray(message)) return message.join('; ');
  }
  if (typeof response === 'string') return response;
  return e.message;
}
