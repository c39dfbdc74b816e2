import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toErrorResponse } from '@byrd/platform';
import { errorPage } from './pages/hosted-pages.js';
import { sendPage } from './pages/html.js';

/** Errors of the shopper-facing pages: the same status and message as the API, as a page. */
@Catch()
export class PageErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger(PageErrorFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const response = toErrorResponse(exception, String(request.id));
    if (response.status >= 500) this.logger.error(exception);
    sendPage(reply, errorPage(response));
  }
}
