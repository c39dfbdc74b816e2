import type { TransactionStatus } from './enums.js';

/** What a return code means. */
export interface ReturnCodeInfo {
  /** The `description` sent next to the code. */
  readonly description: string;
  /** Transaction status the code implies, or null when it implies none. */
  readonly status: TransactionStatus | null;
  /**
   * HTTP status when the code is answered as an error body; null when the code travels in a
   * successful response (a denied payment is still a 201 carrying BYRD205).
   */
  readonly httpStatus: number | null;
}

/** The return codes of API-FACTS.md: `code`, its `description`, implied status and HTTP status. */
export const RETURN_CODES = {
  BYRD010: { description: 'Request accepted', status: null, httpStatus: null },
  BYRD200: { description: 'Operation successfully completed', status: 'Success', httpStatus: null },
  BYRD201: {
    description: 'Payment being processed. Waiting for shopper',
    status: 'Processing',
    httpStatus: null,
  },
  BYRD203: {
    description:
      'An error occurred while processing the payment. Please query the transaction to confirm its status',
    status: 'TemporaryFailed',
    httpStatus: null,
  },
  BYRD205: { description: 'Operation rejected', status: 'Denied', httpStatus: null },
  BYRD206: { description: 'Operation blocked by velocity', status: 'Denied', httpStatus: null },
  // The transaction itself reads `Created` until the shopper acts; Processing is the outcome class.
  BYRD207: { description: 'Pending redirect', status: 'Processing', httpStatus: null },
  BYRD208: { description: 'Payment canceled by the shopper', status: 'Canceled', httpStatus: null },
  BYRD230: { description: 'Payment already refunded', status: 'Denied', httpStatus: 422 },
  BYRD231: {
    description: 'The refund amount exceeds the remaining balance of the original payment',
    status: 'Denied',
    httpStatus: 422,
  },
  // Decision: a business-rule failure like BYRD230/231, so 422.
  BYRD240: { description: 'Token is expired', status: 'Error', httpStatus: 422 },
  BYRD290: { description: 'Pre-processing failed', status: 'Error', httpStatus: null },
  BYRD291: { description: 'Acquiring preparation failed', status: 'Error', httpStatus: null },
  BYRD292: { description: 'No payment methods available', status: 'Error', httpStatus: null },
  BYRD294: { description: 'Update failed', status: 'Error', httpStatus: null },
  BYRD299: { description: 'Could not complete', status: 'Error', httpStatus: null },
  BYRD401: { description: 'Unauthorized', status: 'Error', httpStatus: 401 },
  BYRD403: { description: 'Forbidden', status: 'Error', httpStatus: 403 },
  BYRD900: { description: 'Invalid input', status: 'Error', httpStatus: 400 },
  BYRD901: { description: 'Resource not found', status: 'Error', httpStatus: 404 },
  BYRD999: { description: 'Unhandled error', status: 'Error', httpStatus: 500 },
} as const satisfies Record<`BYRD${number}`, ReturnCodeInfo>;

/** Every return code. */
export type ReturnCode = keyof typeof RETURN_CODES;

/** Codes answered as an HTTP error (they have an `httpStatus`); map these exhaustively. */
export type ErrorReturnCode = {
  [C in ReturnCode]: (typeof RETURN_CODES)[C]['httpStatus'] extends number ? C : never;
}[ReturnCode];

/** Every return code, in table order. */
export const ALL_RETURN_CODES = Object.freeze(Object.keys(RETURN_CODES) as ReturnCode[]);

/** True for a known return code. */
export function isReturnCode(value: unknown): value is ReturnCode {
  return typeof value === 'string' && Object.hasOwn(RETURN_CODES, value);
}

/** The `description` sent with `code`. */
export function describe(code: ReturnCode): string {
  return RETURN_CODES[code].description;
}

/** Alias of {@link describe} for code that also uses Jest's global `describe`. */
export const describeReturnCode = describe;

/** Full table entry of a code. */
export function returnCodeInfo(code: ReturnCode): ReturnCodeInfo {
  return RETURN_CODES[code];
}

/**
 * Failures that have an HTTP status but no return code of their own (decision: API-FACTS.md
 * defines none). Their error body carries BYRD900, the code clients already treat as "this
 * request was not accepted as sent", and the `message` tells which case it is.
 */
export const HTTP_ONLY_ERRORS = {
  /** Same idempotency-key while the first request is still running. */
  IdempotencyInProgress: {
    httpStatus: 409,
    code: 'BYRD900',
    message: 'A request with this idempotency-key is still being processed',
  },
  /** Same idempotency-key with a different body. */
  IdempotencyKeyReused: {
    httpStatus: 422,
    code: 'BYRD900',
    message: 'This idempotency-key was already used with a different request',
  },
  /** Body over the size limit. */
  PayloadTooLarge: { httpStatus: 413, code: 'BYRD900', message: 'The request body is too large' },
  /** Rate limit hit; the response also carries `Retry-After`. */
  RateLimited: { httpStatus: 429, code: 'BYRD900', message: 'Too many requests; retry later' },
} as const satisfies Record<string, { httpStatus: number; code: ReturnCode; message: string }>;
export type HttpOnlyError = keyof typeof HTTP_ONLY_ERRORS;
