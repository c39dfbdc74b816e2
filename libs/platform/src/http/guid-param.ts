import type { PipeTransform } from '@nestjs/common';
import { guidOf } from '@byrd/contracts';
import { ApiError } from '../errors/api-error.js';
import { invalidFields } from '../errors/validation.js';

/**
 * The one check of a GUID path id, before the handler runs: `@Param('orderId', GuidParam.notFound('Order'))`.
 * Anything that is not a GUID names nothing, so most routes answer it as not found; a route whose
 * published contract says 400 refuses it as invalid input instead. A GUID is read as `@IsGuid()`
 * reads one in a body: trimmed and lowercased (the API's form), so an id a client stored uppercase
 * (SQL Server's uniqueidentifier as text) names the same order as in the body of a payment.
 */
export class GuidParam implements PipeTransform<string, string> {
  constructor(private readonly refuse: (value: string) => ApiError) {}

  transform(value: string): string {
    const id = guidOf(value);
    if (id === null) throw this.refuse(value);
    return id;
  }

  /** 404 `<what> <value> was not found`, exactly as a GUID that matches nothing. */
  static notFound(what: string): GuidParam {
    return new GuidParam((value) => ApiError.notFound(`${what} ${value}`));
  }

  /** 400 BYRD900 naming the parameter, worded as the DTO rule `@IsGuid()` words it. */
  static invalid(name: string): GuidParam {
    return new GuidParam(() => invalidFields([{ field: name, message: `${name} must be a GUID` }]));
  }
}
