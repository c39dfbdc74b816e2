import type { ErrorBody, FieldError, ReturnCode } from '@byrd/contracts';

/** Every error this client throws. */
export class ByrdError extends Error {
  override name = 'ByrdError';
}

/**
 * The API answered with an error status (4xx/5xx). Carries the platform's error body: `code`
 * (e.g. `BYRD900`), `description`, `message` (the body's sentence, as is), the invalid `errors` of a
 * `BYRD900`, and `requestId` to quote to support.
 */
export class ByrdApiError extends ByrdError {
  override name = 'ByrdApiError';
  /** HTTP status, e.g. 400, 404, 422. */
  readonly status: number;
  /** Return code of the body, e.g. `BYRD900`, `BYRD231`. */
  readonly code: ReturnCode;
  /** Fixed text of `code`. */
  readonly description: string;
  /** Invalid fields of a `BYRD900`, empty otherwise. */
  readonly errors: FieldError[];
  /** Id of the request (body `requestId`, else the `x-request-id` answer header). */
  readonly requestId: string | undefined;
  /** Method and path of the request that failed, e.g. `POST /api/v2/payment`. */
  readonly request: string;
  /** Seconds the server asked to wait before a retry (`Retry-After`), when it said. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: {
    status: number;
    body: ErrorBody;
    request: string;
    requestId: string | undefined;
    retryAfterSeconds: number | undefined;
  }) {
    super(init.body.message);
    this.status = init.status;
    this.code = init.body.code;
    this.description = init.body.description;
    this.errors = init.body.errors ?? [];
    this.requestId = init.body.requestId ?? init.requestId;
    this.request = init.request;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }

  /** One line for logs: `400 BYRD900 Invalid input (POST /api/v2/orders): <message> [requestId]`. */
  override toString(): string {
    return `${this.name}: ${this.status} ${this.code} ${this.description} (${this.request}): ${this.message} [${this.requestId ?? 'no request id'}]`;
  }
}

/** No answer came back (connection refused or reset, DNS, timeout), after every retry. */
export class ByrdConnectionError extends ByrdError {
  override name = 'ByrdConnectionError';

  constructor(
    /** Method and path of the request, e.g. `POST /api/v2/payment`. */
    readonly request: string,
    /** How many times it was sent. */
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`${request}: no answer after ${attempts} attempt(s): ${describeCause(cause)}`, { cause });
  }
}

/** A webhook whose signature, timestamp, credential or body does not check out. Answer it 4xx. */
export class WebhookVerificationError extends ByrdError {
  override name = 'WebhookVerificationError';
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // undici's "fetch failed" hides the useful part (ECONNREFUSED, other side closed) in its cause.
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
  return `${cause.message}${inner}`;
}
