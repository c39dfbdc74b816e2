import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { ResendWebhooksRequest, ResendWebhooksResponse } from '@byrd/contracts';
import {
  createdWithinKeyRetention,
  lockKeyInTransaction,
  Refusal,
  type MerchantContext,
} from '@byrd/platform';
import { DeliveryWorker } from '../delivery/delivery-worker.js';
import { UrlGuard } from '../egress/url-guard.js';
import { vetReceiverUrl } from '../settings/settings.usecases.js';
import { WebhookResendRequestRow } from './webhook.entity.js';

/**
 * Queues one extra attempt per webhook of the merchant (to its setting's URL, or to `url`). It
 * does not restart or shorten the retry schedule; the delivery workers send it shortly (202), first
 * among the webhook's endpoint's deliveries, within that endpoint's fair share
 * (docs/webhook-fairness.md).
 *
 * With an `idempotency-key`, what it queued is kept under the key in the same transaction
 * (`webhook_resend_requests`): a retry of a request that died before its key's answer was stored
 * answers the same and queues nothing more (each resend is an attempt the receiver gets).
 */
@Injectable()
export class ResendWebhooks {
  constructor(
    private readonly dataSource: DataSource,
    private readonly guard: UrlGuard,
    private readonly worker: DeliveryWorker,
  ) {}

  async execute(
    merchant: MerchantContext,
    request: ResendWebhooksRequest,
    idempotencyKey?: string,
  ): Promise<ResendWebhooksResponse> {
    const ids = [...new Set(request.ids.map((id) => id.toLowerCase()))];
    const url = request.url ?? null;
    if (idempotencyKey) {
      // A retry answers what its key queued, whatever `url` resolves to now (nothing more goes there).
      const earlier = await this.requestOfKey(this.dataSource.manager, merchant, idempotencyKey, ids, url);
      if (earlier) return answer(ids, earlier.resent);
    }
    if (url) await vetReceiverUrl(this.guard, 'url', url, merchant);
    const queued = idempotencyKey
      ? await this.queueUnderKey(merchant, idempotencyKey, ids, url)
      : await queue(this.dataSource.manager, merchant.merchantId, ids, url);
    if (queued.settingsIds.length > 0) this.worker.wake({ resendsOf: queued.settingsIds });
    return answer(ids, queued.resent);
  }

  /**
   * Queues the resends and keeps what was queued under the key, in one transaction, under the key's
   * lock: of two requests of the key at once (the first stalled past its lease), one queues and the
   * other answers what it queued.
   */
  private queueUnderKey(
    merchant: MerchantContext,
    idempotencyKey: string,
    ids: string[],
    url: string | null,
  ): Promise<Queued> {
    return this.dataSource.transaction(async (manager) => {
      await lockKeyInTransaction(manager, 'resends', merchant.merchantId, idempotencyKey);
      const earlier = await this.requestOfKey(manager, merchant, idempotencyKey, ids, url);
      if (earlier) return { resent: earlier.resent, settingsIds: [] };
      const queued = await queue(manager, merchant.merchantId, ids, url);
      await manager.getRepository(WebhookResendRequestRow).insert({
        id: randomUUID(),
        merchantId: merchant.merchantId,
        idempotencyKey,
        ids,
        url,
        resent: queued.resent,
        createdAt: new Date(),
      });
      return queued;
    });
  }

  /**
   * The resend an earlier request with this idempotency-key queued, within the key's retention. The
   * same key for other webhooks or another URL is refused, as the key's stored answer would be.
   */
  private async requestOfKey(
    manager: EntityManager,
    merchant: MerchantContext,
    idempotencyKey: string,
    ids: string[],
    url: string | null,
  ): Promise<WebhookResendRequestRow | null> {
    const earlier = await manager.getRepository(WebhookResendRequestRow).findOne({
      where: { merchantId: merchant.merchantId, idempotencyKey, createdAt: createdWithinKeyRetention() },
      order: { createdAt: 'DESC' },
    });
    if (earlier && (earlier.url !== url || earlier.ids.join() !== ids.join())) {
      throw Refusal.idempotencyKeyReused('This idempotency-key was already used to resend other webhooks');
    }
    return earlier;
  }
}

/** The webhooks whose resends were queued, and their settings (the endpoints to wake). */
type Queued = { resent: string[]; settingsIds: string[] };

/**
 * Queues a resend of each of `ids` that is a webhook of the merchant with a live setting; answers
 * those found. The webhooks are locked (FOR KEY SHARE, in id order) before their resends are
 * written: one the retention sweep is deleting is waited for and then not found, as if it had never
 * been there (its resend would fail the foreign key); one locked here the sweep passes over, and
 * keeps while its resend is queued (purge-webhooks.usecase.ts). A deleted setting's webhooks are not
 * found: its resends would be dropped unsent (CLAIM_RESENDS_SQL), and its secret and credentials are
 * no longer the merchant's to use, whatever `url` says.
 */
async function queue(
  manager: EntityManager,
  merchantId: string,
  ids: string[],
  url: string | null,
): Promise<Queued> {
  const rows = await manager.query<{ webhook_id: string; settings_id: string }[]>(
    `WITH found AS (
       SELECT w.id, w.settings_id FROM webhooks w JOIN webhook_settings s ON s.id = w.settings_id
       WHERE w.merchant_id = $1 AND w.id = ANY ($2::uuid[]) AND s.deleted_at IS NULL
       ORDER BY w.id
       FOR KEY SHARE OF w
     )
     INSERT INTO webhook_resends (id, webhook_id, settings_id, url)
     SELECT gen_random_uuid(), id, settings_id, $3 FROM found
     RETURNING webhook_id, settings_id`,
    [merchantId, ids, url],
  );
  return { resent: rows.map((r) => r.webhook_id), settingsIds: rows.map((r) => r.settings_id) };
}

/** The answer to a request for `ids`: those in `resent` were queued, in the request's order. */
function answer(ids: string[], resent: string[]): ResendWebhooksResponse {
  const found = new Set(resent);
  return {
    data: { resent: ids.filter((id) => found.has(id)), notFound: ids.filter((id) => !found.has(id)) },
  };
}
