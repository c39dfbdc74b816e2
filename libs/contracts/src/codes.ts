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
  // Decision (API-FACTS names no code for it): an idempotent request still running, so a client
  // tells "wait and retry with the same key" from a refusal.
  BYRD409: { description: 'Request in progress', status: null, httpStatus: 409 },
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

/** The code of an operation that completed as asked. */
export const SUCCESS_CODE = 'BYRD200' satisfies ReturnCode;

/** The `code` a response carries and the `description` that goes with it. */
export function withDescription<C extends ReturnCode>(code: C): { code: C; description: string } {
  return { code, description: RETURN_CODES[code].description };
}

/** Full table entry of a code. */
export function returnCodeInfo(code: ReturnCode): ReturnCodeInfo {
  return RETURN_CODES[code];
}

/**
 * Every HTTP error status the API answers and the codes its body may carry: the table README's
 * "Errors" section lists, and what the fuzz tests hold every answer to.
 */
export const ERROR_STATUS_CODES: Readonly<Record<number, readonly ReturnCode[]>> = {
  400: ['BYRD900'],
  401: ['BYRD401'],
  403: ['BYRD403'],
  404: ['BYRD901'],
  // An idempotent request still running; the 3DS SDK's postAuth while the shopper has not answered.
  409: ['BYRD409', 'BYRD201'],
  413: ['BYRD900'],
  // A business rule: its own code, or the outcome code it stands for (BYRD205 already paid, BYRD292
  // no such method); an idempotency key reused with another body is BYRD900.
  422: ALL_RETURN_CODES.filter(
    (c) =>
      RETURN_CODES[c].httpStatus === 422 ||
      (RETURN_CODES[c].httpStatus === null && RETURN_CODES[c].status !== 'Success'),
  ).concat('BYRD900'),
  // Too many requests from one client: the velocity code, with Retry-After.
  429: ['BYRD206'],
  500: ['BYRD999'],
  502: ['BYRD999'],
  503: ['BYRD999'],
  504: ['BYRD999'],
};

/** The error table as Markdown, for each service's OpenAPI description. */
export function errorCodesMarkdown(): string {
  const rows = Object.entries(ERROR_STATUS_CODES).map(
    ([status, codes]) =>
      `| ${status} | ${codes.map((c) => `${c} ${RETURN_CODES[c].description}`).join('; ')} |`,
  );
  return [
    'Errors answer `{ code, description, message, errors?, requestId }`; each HTTP status carries one of these codes:',
    '',
    '| HTTP | code |',
    '|---|---|',
    ...rows,
  ].join('\n');
}
