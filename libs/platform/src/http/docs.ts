// The error side of the services' OpenAPI documents: each operation lists every HTTP error status it
// can answer, with the error body and the return codes that status carries for it. Controllers name
// what their use cases refuse (404, 422 BYRD231, ...); what the platform itself answers on every route
// (validation, auth, body limit, idempotency, failures) is added here, once, from how it is wired.
import { applyDecorators } from '@nestjs/common';
import {
  ApiResponse,
  getSchemaPath,
  type OpenAPIObject,
  type OperationObject,
  type ParameterObject,
  type ReferenceObject,
  type ResponseObject,
  type SchemaObject,
} from '@nestjs/swagger';
import {
  ErrorBodySchema,
  HttpHeaders,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  RETURN_CODES,
  type ReturnCode,
} from '@byrd/contracts';
import { IDEMPOTENT_METHODS } from '../idempotency/idempotency.guard.js';

/** Error statuses of one operation and the codes each may carry. */
export type ErrorCodes = Partial<Record<number, readonly ReturnCode[]>>;

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid input',
  401: 'Missing or unknown API key',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body too large',
  422: 'Refused by a business rule',
  429: 'Too many requests (see Retry-After)',
  500: 'Unhandled error',
  503: 'A service it depends on is unavailable (see Retry-After when given)',
};

/** Where an error response keeps its codes, so the platform's can be merged into a controller's. */
const CODES_EXTENSION = 'x-return-codes';

/**
 * The answer of one error status: the error body with `code` narrowed to `codes`; an HTML page (the
 * shopper-facing 3DS pages render their errors) carries the same codes in its text.
 */
export function errorResponse(
  status: number,
  codes: readonly ReturnCode[],
  mediaType: 'application/json' | 'text/html' = 'application/json',
): ResponseObject {
  const unique = [...new Set(codes)];
  const schema: SchemaObject =
    mediaType === 'text/html'
      ? { type: 'string', description: 'An error page naming the code' }
      : {
          allOf: [
            { $ref: getSchemaPath(ErrorBodySchema) },
            { type: 'object', properties: { code: { type: 'string', enum: unique } } },
          ],
        };
  return {
    description: `${STATUS_TEXT[status] ?? 'Error'}: ${unique.map((c) => `${c} ${RETURN_CODES[c].description}`).join('; ')}`,
    content: { [mediaType]: { schema } },
    ...(RETRY_AFTER[status]
      ? { headers: { 'retry-after': { description: RETRY_AFTER[status], schema: { type: 'integer' } } } }
      : {}),
    // An OpenAPI extension: ResponseObject's type names no `x-` fields.
    ...({ [CODES_EXTENSION]: unique } as object),
  };
}

/** When an error answer carries `Retry-After` (seconds): the statuses a retry may change. */
const RETRY_AFTER: Record<number, string> = {
  409: 'Seconds to wait, when a request with the same idempotency-key is still running (BYRD409)',
  422: 'Seconds to wait, on a refusal that holds only while something else is under way (another attempt holds the order); absent on a final one',
  429: 'Seconds to wait',
  503: 'Seconds to wait: a service this request needs did not answer in time, or this replica is stopping',
};

/**
 * The errors an operation's own logic answers, beside the platform's (see {@link completeDocument}):
 * `@ApiErrors({ 404: ['BYRD901'], 422: ['BYRD230', 'BYRD231'] })`.
 */
export function ApiErrors(errors: ErrorCodes): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...Object.entries(errors).map(([status, codes]) =>
      ApiResponse({ status: Number(status), ...errorResponse(Number(status), codes ?? []) }),
    ),
  );
}

/** The 404 of an id that is unknown or another merchant's. */
export const NOT_FOUND: ErrorCodes = { 404: ['BYRD901'] };

export interface PlatformAnswers {
  /** The app runs the idempotency guard: every POST and DELETE takes `idempotency-key`. */
  idempotency: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * Adds to every operation what the platform answers on its own: 400 BYRD900 (validation, malformed
 * JSON or path), 401 BYRD401 unless the operation is public (`security: []`), 413 BYRD900 on a body
 * over the limit, 500 BYRD999; with idempotency, POSTs and DELETEs document the `idempotency-key`
 * header, its 409 BYRD409 (the first request still runs) and 422 BYRD900 (the key reused with another
 * request).
 */
export function completeDocument(document: OpenAPIObject, answers: PlatformAnswers): OpenAPIObject {
  for (const pathItem of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!operation) continue;
      // Fastify reads a body whatever the method, so any request may be over the limit (413).
      const platform: ErrorCodes = { 400: ['BYRD900'], 413: ['BYRD900'], 500: ['BYRD999'] };
      if (!isPublic(operation, document)) platform[401] = ['BYRD401'];
      if (answers.idempotency && IDEMPOTENT_METHODS.has(method.toUpperCase())) {
        platform[409] = ['BYRD409'];
        platform[422] = ['BYRD900'];
        // In place of one a handler's own `@Headers('idempotency-key')` made (Swagger marks it required).
        const others = (operation.parameters ?? []).filter((p) => !isIdempotencyKeyHeader(p));
        operation.parameters = [...others, idempotencyKeyParameter()];
      }
      mergeErrors(operation, platform);
    }
  }
  return document;
}

function isPublic(operation: OperationObject, document: OpenAPIObject): boolean {
  const security = operation.security ?? document.security ?? [];
  return security.length === 0;
}

function isIdempotencyKeyHeader(parameter: ParameterObject | ReferenceObject): boolean {
  return (
    'in' in parameter &&
    parameter.in === 'header' &&
    parameter.name.toLowerCase() === HttpHeaders.IdempotencyKey.toLowerCase()
  );
}

function idempotencyKeyParameter(): ParameterObject {
  return {
    name: HttpHeaders.IdempotencyKey,
    in: 'header',
    required: false,
    description: 'Repeating the request with the same key and body replays the first answer (kept 24 hours)',
    schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
  };
}

/**
 * Adds `errors` to the operation's responses (a status it already lists gets the union of codes);
 * an operation that answers an HTML page answers its errors as pages too.
 */
function mergeErrors(operation: OperationObject, errors: ErrorCodes): void {
  const mediaType = answersPages(operation) ? 'text/html' : 'application/json';
  const statuses = new Set([
    ...Object.keys(errors),
    ...Object.keys(operation.responses).filter((status) => Number(status) >= 400),
  ]);
  for (const status of statuses) {
    const existing = operation.responses[status] as ResponseObject | undefined;
    const codes = [...codesOf(existing), ...(errors[Number(status)] ?? [])];
    operation.responses[status] = errorResponse(Number(status), codes, mediaType);
  }
}

function answersPages(operation: OperationObject): boolean {
  return Object.entries(operation.responses).some(
    ([status, response]) =>
      Number(status) < 400 && 'text/html' in ((response as ResponseObject).content ?? {}),
  );
}

function codesOf(response: ResponseObject | undefined): ReturnCode[] {
  const codes = (response as Record<string, unknown> | undefined)?.[CODES_EXTENSION];
  if (Array.isArray(codes)) return codes as ReturnCode[];
  // Nest's explorer may keep only the response fields it knows: read the narrowed enum then.
  const schema = response?.content?.['application/json']?.schema as SchemaObject | undefined;
  const narrowed = schema?.allOf?.[1];
  const code = narrowed && 'properties' in narrowed ? (narrowed.properties?.code as SchemaObject) : undefined;
  return (code?.enum as ReturnCode[] | undefined) ?? [];
}
