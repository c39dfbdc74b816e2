import {
  applyDecorators,
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  ListWebhooksQuery,
  ResendWebhooksAnswer,
  ResendWebhooksRequest,
  WebhookAttemptListAnswer,
  WebhookListAnswer,
  type ResendWebhooksResponse,
  type WebhookAttemptListResponse,
  type WebhookListResponse,
} from '@byrd/contracts';
import {
  ApiErrors,
  CurrentMerchant,
  GuidParam,
  idempotencyKeyOf,
  NOT_FOUND,
  readPage,
  type AuthenticatedRequest,
  type MerchantContext,
  type Page,
  type RequestHeaders,
} from '@byrd/platform';
import { ListAttempts, ListWebhooks } from './webhook-history.usecases.js';
import { ResendWebhooks } from './resend-webhooks.usecase.js';

const PagingHeaders = () =>
  applyDecorators(
    ApiHeader({ name: 'x-page', required: false, description: '1-based page number (default 1)' }),
    ApiHeader({
      name: 'x-page-size',
      required: false,
      description: 'Results per page (default 20, at most 100)',
    }),
  );

const PAGE_HEADERS = {
  'x-current-page': { description: 'Page returned', schema: { type: 'integer' } },
  'x-page-size': { description: 'Page size used', schema: { type: 'integer' } },
  'x-page-count': { description: 'Number of pages', schema: { type: 'integer' } },
  'x-total-item-count': { description: 'Webhooks over all pages', schema: { type: 'integer' } },
} as const;

function paged<T>(reply: FastifyReply, page: Page<T>): { data: T[] } {
  void reply.headers(page.headers);
  return { data: page.data };
}

@ApiTags('webhooks')
@Controller('api/v1/webhooks')
export class WebhooksController {
  constructor(
    private readonly listWebhooks: ListWebhooks,
    private readonly listAttempts: ListAttempts,
    private readonly resendWebhooks: ResendWebhooks,
  ) {}

  @Get()
  @ApiOperation({
    summary:
      'Webhooks, most recent first; answer headers x-current-page, x-page-size, x-page-count, x-total-item-count',
  })
  @ApiQuery({
    name: 'referenceId',
    required: false,
    description: 'An orderId, transactionId or chargebackId',
  })
  @PagingHeaders()
  @ApiOkResponse({ type: WebhookListAnswer, headers: PAGE_HEADERS })
  async list(
    @CurrentMerchant() merchant: MerchantContext,
    @Query() query: ListWebhooksQuery,
    @Headers() headers: RequestHeaders,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WebhookListResponse> {
    return paged(reply, await this.listWebhooks.execute(merchant, query.referenceId, readPage(headers)));
  }

  @Get(':webhookId/attempts')
  @ApiOperation({
    summary: 'Attempt history of a webhook (scheduled attempts and resends), most recent first',
  })
  @PagingHeaders()
  @ApiOkResponse({ type: WebhookAttemptListAnswer, headers: PAGE_HEADERS })
  @ApiErrors(NOT_FOUND)
  async attempts(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('webhookId', GuidParam.notFound('Webhook')) webhookId: string,
    @Headers() headers: RequestHeaders,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WebhookAttemptListResponse> {
    return paged(reply, await this.listAttempts.execute(merchant, webhookId, readPage(headers)));
  }

  @Post('resend')
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Send webhooks once more (one extra attempt each, outside the retry schedule), optionally to another URL',
    description:
      "Webhooks unknown, another merchant's, or of a deleted setting are answered in `notFound` and not sent. " +
      'A webhook whose resend to the same URL is still waiting (or being sent) is answered in `resent` and ' +
      'not queued again. A merchant may have a limited number of resends waiting (1000 by default): a ' +
      'request that would pass it is refused whole with 429 BYRD206 and Retry-After, queueing nothing.',
  })
  @ApiAcceptedResponse({ type: ResendWebhooksAnswer })
  // BYRD206: the merchant's queued resends would pass WEBHOOK_RESENDS_MAX_PER_MERCHANT.
  @ApiErrors({ 429: ['BYRD206'] })
  resend(
    @CurrentMerchant() merchant: MerchantContext,
    @Req() request: AuthenticatedRequest,
    @Body() body: ResendWebhooksRequest,
  ): Promise<ResendWebhooksResponse> {
    // Read from the request, not @Headers(name): Swagger would list the header a second time, as required.
    return this.resendWebhooks.execute(merchant, body, idempotencyKeyOf(request));
  }
}
