import { Module } from '@nestjs/common';
import { UrlGuard } from './url-guard.js';
import { WebhookHttpSender } from './http-sender.js';

/** Everything that reaches merchants' receivers: the SSRF guard and the HTTP client. */
@Module({
  providers: [UrlGuard, WebhookHttpSender],
  exports: [UrlGuard, WebhookHttpSender],
})
export class EgressModule {}
