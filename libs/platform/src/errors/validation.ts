import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import {
  MAX_REPORTED_ERRORS,
  reconcileAmounts,
  toFieldErrors,
  TRANSFORM_OPTIONS,
  refusedInputFields,
  validInstance,
  VALIDATOR_OPTIONS,
  type FieldError,
} from '@byrd/contracts';
import { ApiError } from './api-error.js';

/**
 * 400 BYRD900 naming the failing fields by their dotted path (e.g. `card.number`), the first
 * MAX_REPORTED_ERRORS of them (an array sent for an object fails once per item).
 */
export function invalidFields(fieldErrors: FieldError[]): ApiError {
  const reported = fieldErrors.slice(0, MAX_REPORTED_ERRORS);
  const fields = [...new Set(reported.map((e) => e.field || 'body'))];
  return ApiError.invalid(`Invalid value for ${fields.join(', ')}`, reported);
}

/**
 * The minor units a request asks for with `amount` (decimal), `isoAmount` or both (they must agree:
 * `reconcileAmounts`); otherwise 400 BYRD900 naming the field it sent.
 */
export function reconciledIsoAmount(
  request: { amount?: string | null; isoAmount?: number | null },
  currency: string,
): number {
  const amount = reconcileAmounts(request, currency);
  if (!amount.ok)
    throw ApiError.invalidField(request.amount != null ? 'amount' : 'isoAmount', amount.message);
  return amount.isoAmount;
}

/** 400 BYRD900 from class-validator errors. */
export function invalidInputFrom(errors: ValidationError[]): ApiError {
  return invalidFields(toFieldErrors(errors));
}

/**
 * The global pipe: before any DTO is built, and so before any use case runs, the body, query string
 * and path parameters are walked once for text the database could not store (NUL, unpaired
 * surrogates, in values and property names at any depth) and for sizes the libraries cannot
 * validate in linear time (`refusedInputFields`); then the DTO's class-validator rules,
 * compiled once per class for a valid input (`validInstance`); Nest's ValidationPipe (the libraries
 * themselves) answers everything else and words the errors.
 */
export class InputValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // A body of JSON `null`: Nest's pipe would read it as `{}`, and on a capture, refund or release
    // "no amount" means the whole remaining amount. Refused, as `validateDto` refuses it.
    if (metadata.type === 'body' && value === null) {
      throw invalidFields([{ field: '', message: 'the body must be a JSON object' }]);
    }
    if (metadata.type !== 'custom') {
      // `@Param('transactionId')` / `@Query('orderRef')` hand over one value: its name is the path.
      const refused = refusedInputFields(value, metadata.data ?? '');
      if (refused.length) throw invalidFields(refused);
      const valid: object | undefined = metadata.metatype
        ? validInstance(metadata.metatype as new () => object, value)
        : undefined;
      if (valid) return valid;
    }
    return super.transform(value, metadata);
  }
}

/** Validates and transforms every DTO with the same rules as `validateDto` of the contracts. */
export function createValidationPipe(): ValidationPipe {
  return new InputValidationPipe({
    ...VALIDATOR_OPTIONS,
    transform: true,
    transformOptions: TRANSFORM_OPTIONS,
    exceptionFactory: invalidInputFrom,
  });
}
