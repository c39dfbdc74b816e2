import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { OpenAPIObject, OperationObject, ResponseObject } from '@nestjs/swagger';

/** One answer that its app's OpenAPI document does not describe. */
export interface ResponseMismatch {
  method: string;
  /** Route pattern, e.g. `/api/v2/orders/:orderId`. */
  route: string;
  status: number;
  problem: string;
}

const DOCUMENT_ID = 'openapi.json';
// A CommonJS module whose `default` is the plugin itself (Node's ESM default import is module.exports).
const addFormats = ajvFormats.default;

/**
 * Checks real answers against the OpenAPI document of the app that gave them: the status must be
 * listed for the operation, a JSON body must match its schema, another body its media type. Ajv
 * compiles each operation's schema once, on its first answer.
 */
export class OpenApiResponseValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenAPIObject) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: toJsonSchema(document.components ?? {}) });
  }

  /**
   * The mismatch of one answer, or undefined when the document describes it. Answers of routes the
   * document leaves out (health, metrics, the hosted pages' HTML forms) are not its business.
   */
  check(
    method: string,
    route: string,
    status: number,
    contentType: string | undefined,
    body: string | undefined,
  ): ResponseMismatch | undefined {
    const operation = this.operation(method, route);
    if (!operation) return undefined;
    const mismatch = (problem: string): ResponseMismatch => ({ method, route, status, problem });
    const response = operation.responses[String(status)] as ResponseObject | undefined;
    if (!response) {
      const listed = Object.keys(operation.responses).join(', ');
      return mismatch(`status ${status} is not documented (documented: ${listed}); body: ${clip(body)}`);
    }
    if (!body) return undefined;
    const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
    const media = response.content?.[mediaType];
    if (!media) {
      const listed = Object.keys(response.content ?? {}).join(', ') || 'no body';
      return mismatch(`answered ${mediaType || 'a body without content-type'}, documented: ${listed}`);
    }
    if (mediaType !== 'application/json' || !media.schema) return undefined;
    const validate = this.validator(`${method} ${route} ${status}`, media.schema);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return mismatch(`the body is not JSON: ${clip(body)}`);
    }
    if (validate(parsed)) return undefined;
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}`);
    return mismatch(`${[...new Set(errors)].join('; ')}; body: ${clip(body)}`);
  }

  private operation(method: string, route: string): OperationObject | undefined {
    const path = route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const item = this.document.paths[path] as Record<string, OperationObject> | undefined;
    return item?.[method.toLowerCase()];
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema) as object);
      this.compiled.set(key, validate);
    }
    return validate;
  }
}

/**
 * OpenAPI 3.0 schema objects as JSON Schema for Ajv: `nullable: true` becomes "or null" (Ajv's own
 * `nullable` needs a `type` beside it, which a nullable `$ref` has not), and references point into
 * the document registered under {@link DOCUMENT_ID}.
 */
function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const converted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable' || key === 'example') continue;
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/')) {
      converted[key] = `${DOCUMENT_ID}${value}`;
    } else if (key === 'properties' || key === 'schemas') {
      // Maps of names to schemas: a property called `example` or `nullable` is a property.
      converted[key] = Object.fromEntries(
        Object.entries(value as object).map(([name, inner]) => [name, toJsonSchema(inner)]),
      );
    } else {
      converted[key] = toJsonSchema(value);
    }
  }
  if ((schema as { nullable?: unknown }).nullable === true) return { anyOf: [converted, { type: 'null' }] };
  return converted;
}

function clip(body: string | undefined): string {
  if (body === undefined) return '(none)';
  return body.length > 300 ? `${body.slice(0, 300)}…` : body;
}
