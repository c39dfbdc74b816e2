import 'reflect-metadata';
import { plainToInstance, type ClassConstructor, type ClassTransformOptions } from 'class-transformer';
import { validateSync, type ValidationError, type ValidatorOptions } from 'class-validator';
import type { FieldError } from './dto/common.dto.js';
import { MAX_REPORTED_ERRORS, refusedInputFields } from './safe-input.js';
import { validInstance } from './compiled-dto.js';

/**
 * Validator options every service uses (Nest ValidationPipe included): unknown properties
 * are stripped, not rejected, because existing client integrations send extra fields.
 */
export const VALIDATOR_OPTIONS = {
  whitelist: true,
  forbidNonWhitelisted: false,
  forbidUnknownValues: true,
  validationError: { target: false, value: false },
} as const satisfies ValidatorOptions;

/** Transform options matching {@link VALIDATOR_OPTIONS}: no implicit type conversion (the DTOs say what they coerce). */
export const TRANSFORM_OPTIONS = { enableImplicitConversion: false } as const satisfies ClassTransformOptions;

/** Flattens class-validator errors into `{ field, message }` with dotted property paths. */
export function toFieldErrors(errors: readonly ValidationError[], parentPath = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parentPath ? `${parentPath}.${error.property}` : error.property;
    const own = error.constraints ? [{ field, message: Object.values(error.constraints).join('; ') }] : [];
    return [...own, ...toFieldErrors(error.children ?? [], field)];
  });
}

/** Outcome of {@link validateDto}. */
export type DtoValidation<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/**
 * Transforms and validates a plain payload (HTTP body, NATS message) into a DTO instance,
 * with the same options as the HTTP layer. Like the HTTP layer, it first refuses any string (or
 * property name, at any depth) the database could not store, and an input too large to validate: see {@link refusedInputFields}.
 * A valid payload is built by the compiled plan ({@link validInstance}); the libraries word the errors.
 */
export function validateDto<T extends object>(cls: ClassConstructor<T>, plain: unknown): DtoValidation<T> {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    return { ok: false, errors: [{ field: '', message: 'the body must be a JSON object' }] };
  }
  const refused = refusedInputFields(plain);
  if (refused.length) return { ok: false, errors: refused };
  const valid = validInstance(cls, plain);
  if (valid) return { ok: true, value: valid };
  const value = plainToInstance(cls, plain, TRANSFORM_OPTIONS);
  const errors = validateSync(value, VALIDATOR_OPTIONS);
  return errors.length
    ? { ok: false, errors: toFieldErrors(errors).slice(0, MAX_REPORTED_ERRORS) }
    : { ok: true, value };
}
