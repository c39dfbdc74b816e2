import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { toFieldErrors, TRANSFORM_OPTIONS, VALIDATOR_OPTIONS } from '@byrd/contracts';
import { ApiError } from './api-error.js';

/** 400 BYRD900 naming every failing field by its dotted path (e.g. `card.number`). */
export function invalidInputFrom(errors: ValidationError[]): ApiError {
  const fieldErrors = toFieldErrors(errors);
  const fields = [...new Set(fieldErrors.map((e) => e.field || 'body'))];
  return ApiError.invalid(`Invalid value for ${fields.join(', ')}`, fieldErrors);
}

/** Validates and transforms every DTO with the same rules as `validateDto` of the contracts. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    ...VALIDATOR_OPTIONS,
    transform: true,
    transformOptions: TRANSFORM_OPTIONS,
    exceptionFactory: invalidInputFrom,
  });
}
