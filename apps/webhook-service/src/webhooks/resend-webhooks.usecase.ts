import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ResendWebhooksRequest, ResendWebhooksResponse } from '@byrd/contracts';
import type { MerchantContext } from '@byrd/platform';
import { DeliveryWorker } from '../delivery/delivery-worker.js';
import { UrlGuard } from '../egress/url-guard.js';
import { vetReceiverUrl } from '../settings/settings.usecases.js';

/**
 * Queues one extra attempt per webhook of the merchant (to its setting's URL, or to `url`). It
 * does not restart or shorten the retry schedule; the delivery workers send it shortly (202), first
 * among the webhook's endpoint's deliveries, within that endpoint's fair share
 * (docs/webhook-fairness.md).
 */
@Injectable()
export class ResendWebhooks {
  constructor(
    private readonly dataSource: DataSource,
    private readonly guard: UrlGuard,
    private readonly worker: DeliveryWorker,
  ) {}

  async execute(merchant: MerchantContext, request: ResendWebhooksRequest): Promise<ResendWebhooksResponse> {
    if (request.url) await vetReceiverUrl(this.guard, 'url', request.url, merchant);
    const ids = [...new Set(request.ids.map((id) => id.toLowerCase()))];
    // The webhooks are locked (FOR KEY SHARE, in id order) before their resends are written: one the
    // retention sweep is deleting is waited for and then not found, as if it had never been there
    // (its resend would fail the foreign key); one locked here the sweep passes over, and keeps
    // while its resend is queued (purge-webhooks.usecase.ts).
    const rows = await this.dataSource.query<{ webhook_id: string; settings_id: string }[]>(
      `WITH found AS (
         SELECT w.id, w.settings_id FROM webhooks w
         WHERE w.merchant_id = $1 AND w.id = ANY ($2::uuid[])
         ORDER BY w.id
         FOR KEY SHARE
       )
       INSERT INTO webhook_resends (id, webhook_id, settings_id, url)
       SELECT gen_random_uuid(), id, settings_id, $3 FROM found
       RETURNING webhook_id, settings_id`,
      [merchant.merchantId, ids, request.url ?? null],
    );
    const found = new Set(rows.map((r) => r.webhook_id));
    if (found.size > 0) this.worker.wake({ resendsOf: rows.map((r) => r.settings_id) });
    return {
      data: { resent: ids.filter((id) => found.has(id)), notFound: ids.filter((id) => !found.has(id)) },
    };
  }
}
