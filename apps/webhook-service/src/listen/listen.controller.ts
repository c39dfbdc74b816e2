import { Controller, Get, Headers, Inject, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiErrors, ApiKeyRegistry, CurrentMerchant, type MerchantContext } from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { ListenSessions } from './listen-sessions.js';
import { streamSession } from './event-stream.js';

@ApiTags('webhooks')
@Controller('api/v1/webhooks/listen')
export class ListenController {
  constructor(
    private readonly sessions: ListenSessions,
    private readonly keys: ApiKeyRegistry,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
  ) {}

  @Get()
  @ApiOperation({
    summary:
      "Streams this merchant's sandbox events as server-sent events, each the webhook a setting would " +
      "get (headers and body, signed with the session's secret): what `byrd listen --forward-to` forwards",
  })
  @ApiQuery({
    name: 'events',
    required: false,
    description: 'Comma-separated event names (default: every event)',
    example: 'order.paid,transaction.payment.success',
  })
  @ApiErrors({ 403: ['BYRD403'], 429: ['BYRD206'], 503: ['BYRD999'] })
  @ApiProduces('text/event-stream')
  @ApiResponse({
    status: 200,
    description:
      'An event stream: first `event: ready` with `{"sessionId","signingSecret"}`, then one `event: ' +
      'delivery` per webhook with `{"id","event","headers","body"}`; a comment line every 15 s keeps it open',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  async listen(
    @CurrentMerchant() merchant: MerchantContext,
    @Query('events') events: unknown,
    @Headers('x-api-key') apiKey: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const session = await this.sessions.start(merchant, events);
    const keyStillValid = async () => (await this.keys.resolve(apiKey)) !== null;
    streamSession(reply, session, this.config.LISTEN_DRAIN_TIMEOUT_MS, keyStillValid);
  }
}
