import { Body, Controller, Get, Headers, Param, Post, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiErrors, assertUnreachable, NOT_FOUND, Public, TakesFormPosts } from '@byrd/platform';
import { BrowserAuthentication } from './browser-authentication.usecase.js';
import { NotificationForm } from './browser-forms.dto.js';
import { PageErrorFilter } from './page-error.filter.js';
import { authenticatePage, notificationPage, outcomePage, settlingPage } from './pages/hosted-pages.js';
import { sendPage } from './pages/html.js';
import { SdkBundle } from './sdk-bundle.js';
import { ThreeDSLinks } from './three-ds-links.js';

const HTML = { 'text/html': { schema: { type: 'string' } } };

/** The shopper's side of our 3DS server: `action.url`, the SDK bundle and the notification URL. */
@ApiTags('3ds')
@Public()
@Controller('3ds')
export class HostedPagesController {
  constructor(
    private readonly authentication: BrowserAuthentication,
    private readonly sdk: SdkBundle,
    private readonly links: ThreeDSLinks,
  ) {}

  @Get('authenticate/:id')
  @UseFilters(PageErrorFilter)
  @ApiOperation({
    summary: "action.url: runs 3DS in the shopper's browser, then returns to redirectUrl",
    security: [],
  })
  @ApiResponse({
    status: 200,
    description:
      "The authentication page, a page that waits for the payment's outcome (it reloads itself), or the outcome",
    content: HTML,
  })
  @ApiResponse({ status: 303, description: 'Authentication is over: back to the redirectUrl' })
  @ApiErrors(NOT_FOUND)
  async authenticate(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const landing = await this.authentication.landing(id);
    switch (landing.kind) {
      case 'authenticate':
        return sendPage(reply, authenticatePage(landing, this.links.origin));
      case 'settling':
        return sendPage(reply, settlingPage());
      case 'return':
        return void reply.header('cache-control', 'no-store').redirect(landing.url, 303);
      case 'outcome':
        return sendPage(reply, outcomePage(landing.ended, landing.status));
      default:
        return assertUnreachable(landing);
    }
  }

  @Get('sdk.js')
  @ApiOperation({ summary: 'The 3DS browser SDK (ES module): ByrdThreeDS.authenticate(...)', security: [] })
  @ApiResponse({
    status: 200,
    description: 'The SDK (ETag for revalidation)',
    content: { 'text/javascript': { schema: { type: 'string' } } },
  })
  @ApiResponse({ status: 304, description: 'The copy the browser holds (If-None-Match) is current' })
  sdkBundle(@Headers('if-none-match') ifNoneMatch: string | undefined, @Res() reply: FastifyReply): void {
    void reply
      .header('content-type', 'text/javascript; charset=utf-8')
      // Unversioned URL: short freshness, then a cheap revalidation by ETag.
      .header('cache-control', 'public, max-age=300, stale-while-revalidate=3600')
      .header('etag', this.sdk.etag)
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('x-content-type-options', 'nosniff');
    if (this.sdk.isCurrent(ifNoneMatch)) return void reply.status(304).send();
    return void reply.send(this.sdk.source);
  }

  @Post('notification')
  @TakesFormPosts()
  @UseFilters(PageErrorFilter)
  @ApiExcludeEndpoint()
  async notification(@Body() form: NotificationForm, @Res() reply: FastifyReply): Promise<void> {
    sendPage(reply, notificationPage(await this.authentication.notification(form)));
  }
}
