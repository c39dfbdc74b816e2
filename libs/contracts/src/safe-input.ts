import type { FieldError } from './dto/common.dto.js';

/**
 * A NUL (PostgreSQL `text` refuses the byte and `jsonb` its `\u0000` escape) or an unpaired UTF-16
 * surrogate (not encodable as UTF-8: `jsonb` refuses its escape, `text` would silently store U+FFFD).
 * Non-unicode mode on purpose: the pattern looks at UTF-16 code units.
 */
// eslint-disable-next-line no-control-regex
const UNSTORABLE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Nesting deeper than this is refused (no request of the API comes near it; it bounds the walk). */
export const MAX_INPUT_DEPTH = 64;
/**
 * Most properties of one object, or items of one array. The validation libraries' cost grows with
 * the square of them (class-transformer's key de-duplication, `@ArrayUnique`): 80,000 keys in a
 * body under the 1 MB limit cost 7 s of CPU. No field of the API but free-form `metadata` comes
 * near this or the limits below; for `metadata` they are its documented limits (README).
 */
export const MAX_INPUT_ENTRIES = 1_000;
/** Most values (properties and items, at any depth) of one input. */
export const MAX_INPUT_VALUES = 10_000;
/**
 * Longest string. The checks of a text field (no card number in it, a phone number's forms) read
 * all of it, whatever its own length limit: a megabyte costs them 100–200 ms.
 */
export const MAX_INPUT_STRING = 65_536;

/** At most this many problems are reported for one request. */
export const MAX_REPORTED_ERRORS = 20;

/** True when PostgreSQL can store the string as sent (no NUL, no unpaired surrogate). */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE_TEXT.test(value);
}

/** Why a string is refused (too long, or not storable), or null. */
function textProblem(value: string): string | null {
  if (value.length > MAX_INPUT_STRING) return `is longer than ${MAX_INPUT_STRING} characters`;
  if (!UNSTORABLE_TEXT.test(value)) return null;
  return value.includes('\u0000')
    ? 'must not contain a NUL character (\\u0000)'
    : 'must not contain an unpaired UTF-16 surrogate (invalid Unicode text)';
}

/**
 * Why a number is refused, or null: one JSON gave but JavaScript could not hold as sent (1e309 reads
 * as Infinity, 9007199254740993 as ...992), which `metadata` would then store and echo changed.
 */
function numberProblem(value: number): string | null {
  if (Number.isFinite(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER) return null;
  return `is a number beyond ±${Number.MAX_SAFE_INTEGER}, which cannot be kept exactly (send it as a string)`;
}

interface Frame {
  value: object;
  path: string;
  depth: number;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/**
 * Parsed input containers only: arrays and dictionaries, whose prototype is null, `Object.prototype`
 * or, as the query strings Fastify parses (fast-querystring), a bare prototype-less object. Class
 * instances (Dates, Buffers, a request's context) are not input.
 */
function isContainer(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}

/**
 * The one input rule every request passes before its DTO is even built (HTTP bodies, query strings
 * and path parameters through the validation pipe, RPC payloads through `validateDto`): every string,
 * and every property name, at any depth (free-form `metadata` included), must be text PostgreSQL
 * stores as sent, every number one kept exactly (`numberProblem`), and the input's size is bounded where the validation libraries' cost is not
 * linear (MAX_INPUT_DEPTH, MAX_INPUT_ENTRIES, MAX_INPUT_VALUES, MAX_INPUT_STRING). Returns the
 * offending fields by their dotted path as sent (`card.holder`, `metadata.note`, `items.0.name`; a
 * bad property name, or too many, is reported on the object holding them), or `[]`.
 *
 * One linear walk, iterative (no recursion to overflow), one regex test per string.
 */
export function refusedInputFields(plain: unknown, basePath = ''): FieldError[] {
  if (typeof plain === 'string') {
    const problem = textProblem(plain);
    return problem ? [{ field: basePath, message: problem }] : [];
  }
  if (!isContainer(plain)) return [];
  const errors: FieldError[] = [];
  const stack: Frame[] = [{ value: plain, path: basePath, depth: 1 }];
  let values = 0;
  while (stack.length > 0 && errors.length < MAX_REPORTED_ERRORS) {
    const { value, path, depth } = stack.pop()!;
    if (depth > MAX_INPUT_DEPTH) {
      errors.push({ field: path, message: `is nested too deeply (more than ${MAX_INPUT_DEPTH} levels)` });
      continue;
    }
    const isArray = Array.isArray(value);
    const keys = Object.keys(value);
    if (keys.length > MAX_INPUT_ENTRIES) {
      errors.push({
        field: path,
        message: `has more than ${MAX_INPUT_ENTRIES} ${isArray ? 'items' : 'properties'}`,
      });
      continue;
    }
    values += keys.length;
    if (values > MAX_INPUT_VALUES) {
      // A limit of the whole input: named by its base (the body, or the parameter walked).
      errors.push({ field: basePath, message: `has more than ${MAX_INPUT_VALUES} values in all` });
      break;
    }
    for (const key of keys) {
      if (!isArray) {
        const keyProblem = textProblem(key);
        if (keyProblem) {
          errors.push({ field: path, message: `has a property name that ${keyProblem}` });
          continue;
        }
      }
      const item = (value as Record<string, unknown>)[key];
      if (typeof item === 'string') {
        const problem = textProblem(item);
        if (problem) errors.push({ field: join(path, key), message: problem });
      } else if (typeof item === 'number') {
        const problem = numberProblem(item);
        if (problem) errors.push({ field: join(path, key), message: problem });
      } else if (isContainer(item)) {
        stack.push({ value: item, path: join(path, key), depth: depth + 1 });
      }
    }
  }
  return errors
    .slice(0, MAX_REPORTED_ERRORS)
    .sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
}
