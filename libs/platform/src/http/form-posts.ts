import type { Server } from 'node:http';
import { RouteConfig, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';

const TAKES_FORM_POSTS = 'takesFormPosts';

/**
 * A route that takes a browser's HTML form post (`application/x-www-form-urlencoded`): the 3DS
 * pages an issuer or the SDK's hidden form posts to. Every other route takes JSON only.
 */
export const TakesFormPosts = (): MethodDecorator => RouteConfig({ [TAKES_FORM_POSTS]: true });

/**
 * Form bodies only where a route takes them (`@TakesFormPosts`). Anywhere else their fields are
 * not the DTO's: `{"isoAmount":100}` posted by PHP's curl without a Content-Type arrives as a form
 * whose one key is that whole text, and a refund read as naming no amount would refund all of it.
 * So they are refused as a wrong Content-Type (400 BYRD900) before any guard or handler runs.
 */
export function acceptFormPostsOnlyWhereTaken(app: NestFastifyApplication, bodyLimit: number): void {
  app.useBodyParser<Server>('application/x-www-form-urlencoded', { bodyLimit }, (request, body, done) => {
    if (!takesFormPosts(request)) {
      done(ApiError.invalid('Content-Type must be application/json'), undefined);
      return;
    }
    // A null-prototype object, as Fastify's JSON parser gives: `__proto__` is refused outright.
    const form: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
      if (name === '__proto__') {
        done(ApiError.invalid('Object contains forbidden prototype property'), undefined);
        return;
      }
      form[name] = value;
    }
    done(null, form);
  });
}

function takesFormPosts(request: FastifyRequest): boolean {
  const config: object | undefined = request.routeOptions.config;
  return (config as Record<string, unknown> | undefined)?.[TAKES_FORM_POSTS] === true;
}
