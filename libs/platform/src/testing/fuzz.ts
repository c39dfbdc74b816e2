import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import pg from 'pg';
import { ERROR_STATUS_CODES, isReturnCode, RETURN_CODES } from '@byrd/contracts';
import { startEdgeProcess, type EdgeProcess } from './edge.js';

/**
 * Property-based fuzzing of a service's HTTP API from its own OpenAPI document (served at
 * /docs/json): every operation gets requests built from its request schemas, then bent with the
 * corpus of hostile values below. Each answer must be below 500, every error must be the documented
 * body with a code that belongs to its status, and a rejected request must leave the service's data
 * as it was.
 */

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
};

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** One generated request. */
export interface FuzzRequest {
  method: string;
  /** The path as sent (already percent-encoded where it should be; hostile bytes left raw). */
  path: string;
  headers: Record<string, string>;
  /** The body exactly as sent, or undefined for none. */
  body?: string;
  /** The operation it came from, `POST /api/v2/orders`. */
  operation: string;
}

export interface FuzzOptions {
  /** Where requests go: the service itself, or the edge in front of it. */
  baseUrl: string;
  document: OpenApiDocument;
  /** Headers a real caller sends (x-api-key); dropped or spoiled now and then. */
  headers?: Record<string, string>;
  /** Valid bodies by operation (`POST /api/v2/orders`), bent like generated ones, so requests reach past validation. */
  examples?: Record<string, readonly unknown[]>;
  /** Real values for path parameters by name, so requests reach past the lookup. */
  pathValues?: Record<string, readonly string[]>;
  /** The service's data as one string; every rejected request must leave it unchanged. */
  fingerprint: () => Promise<string>;
  /** Browser pages (HTML): answers must stay below 500, but their errors are pages, not the JSON body. */
  pages?: (operation: string) => boolean;
  /** Operations left out (`GET /docs/json`). */
  skip?: (operation: string) => boolean;
  numRuns?: number;
}

export interface FuzzSummary {
  seed: number;
  runs: number;
  /** Answers by HTTP status. */
  statuses: Record<number, number>;
  /** Generated requests per operation. */
  operations: Record<string, number>;
}

/** FUZZ_SEED when set (any run can be replayed), else a fixed one so CI is repeatable. */
export function fuzzSeed(): number {
  const seed = process.env.FUZZ_SEED;
  if (seed === undefined || seed === '') return 20261124;
  if (seed === 'random') return Math.floor(Math.random() * 2 ** 31);
  const parsed = Number(seed);
  if (!Number.isInteger(parsed)) throw new Error(`FUZZ_SEED must be an integer or "random", got "${seed}"`);
  return parsed;
}

// ---- the corpus of values that broke services before, and their relatives ----

const DEEP = 10_000;
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  'a\u0000b',
  '\u0000',
  '\ud800',
  'x\udfffy',
  '%00',
  '\u202e\u0041',
  'x'.repeat(101),
  'x'.repeat(5_000),
  '../../etc/passwd',
  "'; DROP TABLE orders; --",
  '<script>alert(1)</script>',
  '4111111111111111',
  '１２３',
  '😀',
  'null',
  'NaN',
  '1e309',
  '-0',
  '00000000-0000-0000-0000-000000000000',
  'Infinity',
  '{"a":1}',
  '2026-02-30T25:61:61Z',
];

/** Values of the wrong type, the commonest crash: a handler that trusted the shape. */
const TYPE_CONFUSIONS: readonly unknown[] = [undefined, [], {}, null, '', 0, true, [{}], ['x'], { '0': 'x' }];

const HOSTILE_VALUES: readonly unknown[] = [
  -1,
  1.5,
  2 ** 53,
  1e308,
  -1e308,
  [null],
  { __proto__: { polluted: true } },
  JSON.parse('{"__proto__":{"polluted":true}}'),
  JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'),
  ...HOSTILE_STRINGS,
];

/** Raw bodies no schema would produce: not JSON, deep nesting, scalars, over a megabyte. */
const HOSTILE_BODIES: readonly string[] = [
  'not json',
  '{',
  '{"a":',
  '[' + '['.repeat(DEEP) + ']'.repeat(DEEP) + ']',
  '{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP),
  'null',
  '"text"',
  '123',
  '[]',
  '{"a":"\\u0000"}',
  '{"a":"\\ud800"}',
  '\u0000',
  '{"a":1,"a":2}',
  `{"pad":"${'x'.repeat(1_100_000)}"}`,
];

const HOSTILE_PATH_SEGMENTS: readonly string[] = [
  '%00',
  '%ED%A0%80',
  '%',
  '%zz',
  'x'.repeat(101),
  'x'.repeat(2_000),
  '..',
  '%2e%2e',
  '%2F',
  'not-a-guid',
  '00000000-0000-0000-0000-000000000000',
  'DROP%20TABLE',
  '%F0%9F%98%80',
  '%C0%AF',
];

const CONTENT_TYPES: readonly (string | undefined)[] = [
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  undefined,
];

// ---- schemas to arbitraries ----

function resolve(schema: Schema | undefined, document: OpenApiDocument, depth = 0): Schema {
  if (!schema) return {};
  if (schema.$ref && depth < 20) {
    const name = schema.$ref.split('/').pop()!;
    return resolve(document.components?.schemas?.[name], document, depth + 1);
  }
  return schema;
}

/** Values that fit the schema (mostly), so requests get past the first check. */
function valueOf(schema: Schema | undefined, document: OpenApiDocument, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, document);
  if (depth > 6) return fc.constant(null);
  const alternatives = s.oneOf ?? s.anyOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map((a) => valueOf(a, document, depth + 1)));
  if (s.allOf?.length) return valueOf(s.allOf[0], document, depth + 1);
  if (s.enum?.length) return fc.constantFrom(...s.enum);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type ?? (s.properties ? 'object' : undefined)) {
    case 'string':
      return stringOf(s);
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1_000, max: s.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1_000, max: s.maximum ?? 1_000_000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valueOf(s.items, document, depth + 1), {
        minLength: s.minItems ?? 0,
        maxLength: Math.min(s.maxItems ?? 3, 3),
      });
    case 'object': {
      const properties = s.properties ?? {};
      const required = new Set(s.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties))
        record[name] = valueOf(property, document, depth + 1);
      return fc.record(record, { requiredKeys: [...required].filter((k) => k in record) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringOf(s: Schema): fc.Arbitrary<string> {
  switch (s.format) {
    case 'uuid':
      return fc.uuid();
    case 'email':
      return fc.emailAddress();
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'date-time':
      return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
  }
  return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(s.maxLength ?? 24, 40) });
}

const hostile: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TYPE_CONFUSIONS) },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_VALUES) },
);

/** A value, or one bent: a field at any depth replaced by a hostile value or dropped (undefined). */
function bent(value: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 2, arbitrary: value },
    {
      weight: 5,
      arbitrary: fc.tuple(value, fc.nat(), hostile).map(([v, at, h]) => replaceAt(v, at, h)),
    },
    { weight: 1, arbitrary: hostile },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

/** Every node below the root of a JSON value (depth first), as the parent that holds it and its key. */
function slotsOf(value: unknown): { parent: Record<string, unknown>; key: string }[] {
  const slots: { parent: Record<string, unknown>; key: string }[] = [];
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    for (const [key, child] of Object.entries(node)) {
      slots.push({ parent: node as Record<string, unknown>, key });
      walk(child);
    }
  };
  walk(value);
  return slots;
}

/** Replaces the `at`-th node (depth-first, modulo the count) of a JSON value by `hostile`. */
function replaceAt(value: unknown, at: number, hostile: unknown): unknown {
  const copy = structuredClone(value);
  const slots = slotsOf(copy);
  if (slots.length === 0) return hostile;
  const { parent, key } = slots[at % slots.length];
  parent[key] = hostile;
  return copy;
}

/**
 * The sweep run before the random requests: each example with each of its fields, at every depth,
 * replaced in turn by each value of the wrong type. Random runs find such a case only by luck.
 */
function typeConfusionSweep(options: FuzzOptions): FuzzRequest[] {
  const requests: FuzzRequest[] = [];
  for (const [operation, bodies] of Object.entries(options.examples ?? {})) {
    const [method, template] = operation.split(' ');
    const path = template.replace(
      /\{([^}]+)\}/g,
      (_, name: string) => options.pathValues?.[name]?.[0] ?? '00000000-0000-4000-8000-000000000000',
    );
    for (const body of bodies) {
      const count = slotsOf(body).length;
      for (let at = 0; at < count; at++) {
        for (const confusion of TYPE_CONFUSIONS) {
          requests.push({
            method,
            path,
            headers: { ...options.headers, 'content-type': 'application/json' },
            body: JSON.stringify(replaceAt(body, at, confusion)),
            operation,
          });
        }
      }
    }
  }
  return requests;
}

function requestOf(
  method: string,
  template: string,
  operation: Operation,
  options: FuzzOptions,
): fc.Arbitrary<FuzzRequest> {
  const name = `${method.toUpperCase()} ${template}`;
  const params = operation.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const pathArb = fc.tuple(
    ...pathParams.map((p) =>
      fc.oneof(
        {
          weight: 3,
          arbitrary: fc.constantFrom(
            ...(options.pathValues?.[p.name] ?? ['00000000-0000-4000-8000-000000000000']),
          ),
        },
        { weight: 1, arbitrary: fc.uuid() },
        { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_PATH_SEGMENTS) },
      ),
    ),
  );
  const queryArb = fc.array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(...(queryParams.length ? queryParams.map((p) => p.name) : ['q'])),
        fc.constantFrom('x', '__proto__', '%00'),
      ),
      fc.oneof(
        fc.string({ maxLength: 12 }).map(encodeURIComponent),
        fc.integer().map(String),
        fc.constantFrom(...HOSTILE_PATH_SEGMENTS, '-1', '0', '1e309', '9007199254740993', 'true'),
      ),
    ),
    { maxLength: 3 },
  );
  const schema = Object.values(operation.requestBody?.content ?? {})[0]?.schema;
  const examples = options.examples?.[name] ?? [];
  const valid = examples.length
    ? fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom(...examples) },
        { weight: 1, arbitrary: valueOf(schema, options.document) },
      )
    : valueOf(schema, options.document);
  const bodyArb: fc.Arbitrary<string | undefined> = schema
    ? fc.oneof(
        { weight: 8, arbitrary: bent(valid).map((v) => JSON.stringify(v) ?? 'null') },
        { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_BODIES) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      )
    : fc.oneof(
        { weight: 4, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_BODIES) },
      );
  const headerArb = fc.record({
    contentType: fc.constantFrom(...CONTENT_TYPES),
    auth: fc.oneof(
      { weight: 8, arbitrary: fc.constant('real') },
      fc.constant('none'),
      fc.constant('spoiled'),
    ),
    // Now and then an idempotency-key: its guard reads the body before the validation pipe does.
    idempotencyKey: fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.uuid() },
    ),
  });
  return fc.tuple(pathArb, queryArb, bodyArb, headerArb).map(([segments, query, body, h]) => {
    let i = 0;
    const path = template.replace(/\{[^}]+\}/g, () => String(segments[i++]));
    const search = query.length ? `?${query.map(([k, v]) => `${k}=${v}`).join('&')}` : '';
    const headers: Record<string, string> = {};
    if (h.auth !== 'none')
      for (const [k, v] of Object.entries(options.headers ?? {}))
        headers[k] = h.auth === 'real' ? v : `${v.slice(0, -1)}0`;
    if (body !== undefined && h.contentType) headers['content-type'] = h.contentType;
    if (h.idempotencyKey !== undefined) headers['idempotency-key'] = h.idempotencyKey;
    return { method: method.toUpperCase(), path: path + search, headers, body, operation: name };
  });
}

/** Every operation of the document as a generator of requests. */
export function requestsOf(options: FuzzOptions): fc.Arbitrary<FuzzRequest> {
  const arbitraries: fc.Arbitrary<FuzzRequest>[] = [];
  for (const [template, methods] of Object.entries(options.document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      if (options.skip?.(`${method.toUpperCase()} ${template}`)) continue;
      arbitraries.push(requestOf(method, template, operation, options));
    }
  }
  if (arbitraries.length === 0) throw new Error('The OpenAPI document has no operation to fuzz');
  return fc.oneof(...arbitraries);
}

// ---- the checks on each answer ----

/** What is wrong with an answer, or null when it is as documented. */
export function answerProblem(status: number, contentType: string | null, text: string): string | null {
  if (status >= 500) return `answered ${status}`;
  if (status < 400) return null;
  if (!contentType?.includes('application/json')) return `error ${status} is not JSON (${contentType})`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return `error ${status} body is not JSON: ${text.slice(0, 200)}`;
  }
  const { code, description, message, requestId, errors, ...rest } = body;
  if (!isReturnCode(code)) return `error ${status} has no known code: ${text.slice(0, 300)}`;
  if (!(ERROR_STATUS_CODES[status] ?? []).includes(code)) return `error ${status} carries ${code}`;
  if (description !== RETURN_CODES[code].description)
    return `${code} with description ${String(description)}`;
  if (typeof message !== 'string' || message === '') return `error ${status} has no message`;
  if (typeof requestId !== 'string' || requestId === '') return `error ${status} has no requestId`;
  if (errors !== undefined) {
    const ok =
      Array.isArray(errors) &&
      errors.every(
        (e) => e && typeof e === 'object' && typeof e.field === 'string' && typeof e.message === 'string',
      );
    if (!ok) return `error ${status} has malformed errors: ${JSON.stringify(errors).slice(0, 300)}`;
  }
  if (Object.keys(rest).length)
    return `error ${status} has undocumented fields ${Object.keys(rest).join(', ')}`;
  return null;
}

async function send(
  baseUrl: string,
  request: FuzzRequest,
): Promise<{ status: number; contentType: string | null; text: string }> {
  const response = await fetch(`${baseUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.method === 'GET' ? undefined : request.body,
  });
  const contentType = response.headers.get('content-type');
  // An event stream (webhook-service's listen) never ends: its status and type are the answer.
  if (contentType?.startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, contentType, text: '' };
  }
  return { status: response.status, contentType, text: await response.text() };
}

/**
 * Runs the property: `numRuns` requests (1,000 by default), one at a time. On failure fast-check
 * shrinks to the smallest request that still fails and the error names it with the seed to replay.
 */
export async function fuzzHttpApi(options: FuzzOptions): Promise<FuzzSummary> {
  const seed = fuzzSeed();
  const summary: FuzzSummary = { seed, runs: 0, statuses: {}, operations: {} };
  const property = fc.asyncProperty(requestsOf(options), async (request) => {
    const before = await options.fingerprint();
    let answer;
    try {
      answer = await send(options.baseUrl, request);
    } catch (error) {
      throw new Error(`${describeRequest(request)}: no answer (${String(error)})`, { cause: error });
    }
    summary.runs++;
    summary.statuses[answer.status] = (summary.statuses[answer.status] ?? 0) + 1;
    summary.operations[request.operation] = (summary.operations[request.operation] ?? 0) + 1;
    const problem = options.pages?.(request.operation)
      ? answer.status >= 500
        ? `answered ${answer.status}`
        : null
      : answerProblem(answer.status, answer.contentType, answer.text);
    if (problem) throw new Error(`${describeRequest(request)}: ${problem}\n${answer.text.slice(0, 500)}`);
    if (answer.status >= 400 && (await options.fingerprint()) !== before)
      throw new Error(`${describeRequest(request)}: rejected with ${answer.status}, yet the data changed`);
  });
  const result = await fc.check(property, {
    seed,
    numRuns: options.numRuns ?? 1_000,
    examples: typeConfusionSweep(options).map((request) => [request] as [FuzzRequest]),
    endOnFailure: false,
  });
  if (result.failed) {
    const cause =
      result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    throw new Error(
      `Fuzzing failed (seed ${seed}, replay with FUZZ_SEED=${seed}) after ${result.numRuns} runs, ` +
        `shrunk ${result.numShrinks} times:\n${cause}`,
    );
  }
  return summary;
}

function describeRequest(request: FuzzRequest): string {
  const body =
    request.body === undefined
      ? ''
      : ` body ${request.body.length > 300 ? `${request.body.slice(0, 300)}… (${request.body.length} chars)` : request.body}`;
  return `${request.method} ${request.path.length > 300 ? `${request.path.slice(0, 300)}…` : request.path} [${JSON.stringify(request.headers)}]${body}`;
}

/** Tables that change on their own (the relay marks outbox rows sent) or keep requests, not data. */
export const FINGERPRINT_EXCLUDED = ['outbox', 'inbox', 'idempotency_keys', 'migrations', 'typeorm_metadata'];

/**
 * A database's data as one string: every table's rows, except those that change on their own
 * (the outbox relay marks rows sent) or keep requests rather than data (idempotency records).
 */
export function databaseFingerprint(
  databaseUrl: string,
  exclude: readonly string[] = FINGERPRINT_EXCLUDED,
): { read: () => Promise<string>; close: () => Promise<void> } {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  let tables: string[] | undefined;
  return {
    read: async () => {
      tables ??= (
        await pool.query<{ name: string }>(
          `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
        )
      ).rows
        .map((r) => r.name)
        .filter((name) => !exclude.some((e) => name.replace(/"/g, '').startsWith(e)));
      if (tables.length === 0) return '';
      const sql = tables
        .map(
          (t) =>
            `SELECT '${t}' AS t, count(*) AS n, md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS h FROM ${t} x`,
        )
        .join(' UNION ALL ');
      const { rows } = await pool.query<{ t: string; n: string; h: string }>(sql);
      return rows.map((r) => `${r.t}:${r.n}:${r.h}`).join('|');
    },
    close: () => pool.end(),
  };
}

/** A running service for {@link describeFuzzing}. */
export interface FuzzWorld {
  baseUrl: string;
  /** The service's database (or the one its refusals must leave alone). */
  databaseUrl: string;
  /** Tables the fingerprint leaves out (they change on their own schedule). */
  excludeTables?: readonly string[];
  /** Auth headers, examples and path values of {@link FuzzOptions}. */
  options: Pick<FuzzOptions, 'headers' | 'examples' | 'pathValues' | 'pages' | 'skip'>;
  /** Statuses each run must have answered at least once (201: generation reaches past validation). */
  mustSee: readonly number[];
  stop(): Promise<void>;
}

/**
 * The fuzz test of a service's suite: `start` brings the service up, then {@link fuzzHttpApi} runs
 * against it directly and again through the local edge (its own process) in front of it.
 */
export function describeFuzzing(service: string, start: () => Promise<FuzzWorld>): void {
  describe(`${service} under generated and hostile requests (from its own OpenAPI document)`, () => {
    let world: FuzzWorld;
    let edge: EdgeProcess;
    let fingerprint: ReturnType<typeof databaseFingerprint>;
    let document: OpenApiDocument;

    beforeAll(async () => {
      world = await start();
      edge = await startEdgeProcess(service, Number(new URL(world.baseUrl).port));
      fingerprint = databaseFingerprint(world.databaseUrl, world.excludeTables);
      document = (await (await fetch(`${world.baseUrl}/docs/json`)).json()) as OpenApiDocument;
    }, 120_000);
    afterAll(async () => {
      await edge?.close();
      await fingerprint?.close();
      await world?.stop();
    });

    it.each([
      ['directly', () => world.baseUrl],
      ['through the edge', () => edge.url],
    ])(
      '%s: none answered 5xx, every error in the documented body, nothing refused changes data',
      async (_, url) => {
        const summary = await fuzzHttpApi({
          ...world.options,
          baseUrl: url(),
          document,
          fingerprint: fingerprint.read,
        });
        for (const status of world.mustSee)
          expect([status, summary.statuses[status] ?? 0]).not.toEqual([status, 0]);
      },
      300_000,
    );
  });
}
