import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PinoLogger } from 'nestjs-pino';
import { toErrorResponse } from './error-body.js';
import { markTransientAnswer, ReplayedError } from '../idempotency/idempotency.guard.js';

/** Every HTTP error leaves through here, in the uniform body. */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(private readonly logger: PinoLogger) {
    logger.setContext(ApiExceptionFilter.name);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (exception instanceof ReplayedError) {
      // A 204 (a delete's) as it was first sent: no body, so no JSON `null` either.
      if (exception.status === 204) void reply.status(204).send();
      else void reply.status(exception.status).send(exception.body);
      return;
    }
    const response = toErrorResponse(exception, String(request.id));
    if (response.status >= 500) this.logger.error({ err: exception }, 'request failed');
    if (response.transient) markTransientAnswer(request);
    void reply.status(response.status).headers(response.headers).send(response.body);
  }
}
