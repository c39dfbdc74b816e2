import { Injectable, type PipeTransform } from '@nestjs/common';
import { isOneOf } from '@byrd/contracts';
import { ApiError } from '@byrd/platform';

/** A path segment naming an action: anything else is a route that does not exist (404 BYRD901). */
@Injectable()
export class ParseActionPipe<T extends string> implements PipeTransform<string, T> {
  constructor(private readonly actions: readonly T[]) {}

  transform(value: string): T {
    if (isOneOf(this.actions, value)) return value;
    throw ApiError.notFound(`Sandbox action "${value}" (use ${this.actions.join(', ')})`);
  }
}
