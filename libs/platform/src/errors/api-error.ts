import { returnCodeInfo, type FieldError, type ReturnCode } from '@byrd/contracts';

export type { FieldError };

/** The error kinds every transport maps; adding one forces each mapping to handle it. */
export const ErrorKind = {
  InvalidInput: 'InvalidInput',
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'NotFound',
  Conflict: 'Conflict',
  BusinessRule: 'BusinessRule',
  PayloadTooLarge: 'PayloadTooLarge',
  RateLimited: 'RateLimited',
  Unavailable: 'Unavailable',
  Internal: 'Internal',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

export interface ApiErrorOptions {
  /** Return code of API-FACTS.md; defaults to the kind's generic code. */
  code?: ReturnCode;
  errors?: FieldError[];
  /** Seconds to wait before trying again (`Retry-After`): 409, 422 for now, 429 and 503 answers. */
  retryAfter?: number;
  /**
   * Not a final answer (it holds only while something else is under way), so an `idempotency-key`
   * does not keep it: the same request with the same key may succeed later. Implied by `retryAfter`.
   */
  transient?: boolean;
  /** What went wrong underneath, for the logs (their `err` carries its message and stack). */
  cause?: Error;
}

/** A failure the caller should see as-is: mapped to the uniform error body and an HTTP status. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ReturnCode;
  readonly errors?: FieldError[];
  readonly retryAfter?: number;
  readonly transient: boolean;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message, options.cause ? { cause: options.cause } : undefined);
    this.code = options.code ?? defaultCode(kind);
    this.errors = options.errors;
    this.retryAfter = options.retryAfter;
    this.transient = options.transient ?? options.retryAfter !== undefined;
  }

  static invalid(message: string, errors?: FieldError[]): ApiError {
    return new ApiError(ErrorKind.InvalidInput, message, { errors });
  }

  static invalidField(field: string, message: string): ApiError {
    return new ApiError(ErrorKind.InvalidInput, `${field}: ${message}`, { errors: [{ field, message }] });
  }

  static notFound(what: string): ApiError {
    return new ApiError(ErrorKind.NotFound, `${what} was not found`);
  }
}

/**
 * A `.catch` handler that answers another service's "not found" with `replacement()` (e.g. a sentence
 * that reveals less to the caller) and rethrows every other error as it is.
 */
export function notFoundAs(replacement: () => ApiError): (error: unknown) => never {
  return (error) => {
    if (error instanceof ApiError && error.kind === ErrorKind.NotFound) throw replacement();
    throw error;
  };
}

function defaultCode(kind: ErrorKind): ReturnCode {
  switch (kind) {
    case ErrorKind.InvalidInput:
    case ErrorKind.PayloadTooLarge:
      return 'BYRD900';
    case ErrorKind.Conflict:
      return 'BYRD409';
    case ErrorKind.Unauthorized:
      return 'BYRD401';
    case ErrorKind.Forbidden:
      return 'BYRD403';
    case ErrorKind.NotFound:
      return 'BYRD901';
    case ErrorKind.BusinessRule:
      return 'BYRD299';
    case ErrorKind.RateLimited:
      return 'BYRD206';
    case ErrorKind.Unavailable:
    case ErrorKind.Internal:
      return 'BYRD999';
    default:
      return assertUnreachable(kind);
  }
}

export function httpStatusOf(kind: ErrorKind): number {
  switch (kind) {
    case ErrorKind.InvalidInput:
      return 400;
    case ErrorKind.Unauthorized:
      return 401;
    case ErrorKind.Forbidden:
      return 403;
    case ErrorKind.NotFound:
      return 404;
    case ErrorKind.Conflict:
      return 409;
    case ErrorKind.PayloadTooLarge:
      return 413;
    case ErrorKind.BusinessRule:
      return 422;
    case ErrorKind.RateLimited:
      return 429;
    case ErrorKind.Unavailable:
      return 503;
    case ErrorKind.Internal:
      return 500;
    default:
      return assertUnreachable(kind);
  }
}

export function assertUnreachable(value: never): never {
  throw new Error(`Unhandled case: ${String(value)}`);
}

/** The kind of a return code received from another service (RPC replies carry only the code). */
export function kindOfCode(code: ReturnCode): ErrorKind {
  switch (code) {
    case 'BYRD900':
      return ErrorKind.InvalidInput;
    case 'BYRD401':
      return ErrorKind.Unauthorized;
    case 'BYRD403':
      return ErrorKind.Forbidden;
    case 'BYRD901':
      return ErrorKind.NotFound;
    case 'BYRD409':
      return ErrorKind.Conflict;
    case 'BYRD206':
      return ErrorKind.RateLimited;
    case 'BYRD999':
      return ErrorKind.Internal;
    default:
      return returnCodeInfo(code).httpStatus === 500 ? ErrorKind.Internal : ErrorKind.BusinessRule;
  }
}
