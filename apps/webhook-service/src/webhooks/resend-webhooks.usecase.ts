import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { ResendWebhooksRequest, ResendWebhooksResponse } from '@byrd/contracts';
import {
  ApiError,
  createdWithinKeyRetention,
  ErrorKind,
  lockInTransaction,
  lockKeyInTransaction,
  Refusal,
  type MerchantContext,
} from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { DeliveryWorker } from '../delivery/delivery-worker.js';
import { UrlGuard } from '../egress/url-guard.js';
import { vetReceiverUrl } from '../settings/settings.usecases.js';
import { WebhookResendRequestRow } from './webhook.entity.js';

/**
 * Queues one extra attempt per webhook of the merchant (to its setting's URL, or to `url`). It
 * does not restart or shorten the retry schedule; the delivery workers send it shortly (202), first
 * among the webhook's endpoint's deliveries, within that endpoint's fair share
 * (docs/webhook-fairness.md). A webhook has at most one resend to an address waiting, and a
 * merchant at most WEBHOOK_RESENDS_MAX_PER_MERCHANT (see `queue`): each is a signed POST the
 * platform makes to a URL the merchant chose.
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
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
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
      : await this.dataSource.transaction((manager) => this.queue(manager, merchant, ids, url));
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
      const queued = await this.queue(manager, merchant, ids, url);
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

  private queue(manager: EntityManager, merchant: MerchantContext, ids: string[], url: string | null) {
    return queue(manager, merchant.merchantId, ids, url, this.config.WEBHOOK_RESENDS_MAX_PER_MERCHANT);
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

/** Seconds a merchant refused at the cap is told to wait: queued resends go out within seconds. */
const RETRY_AFTER_AT_CAP_SECONDS = 30;

/**
 * The webhooks of the merchant among $2 whose setting is live, locked FOR KEY SHARE in id order: one
 * the retention sweep is deleting is waited for and then not found, as if it had never been there
 * (its resend would fail the foreign key); one locked here the sweep passes over, and keeps while
 * its resend is queued (purge-webhooks.usecase.ts). A deleted setting's webhooks are not found: its
 * resends would be dropped unsent (CLAIM_RESENDS_SQL), its secret and credentials are no longer the
 * merchant's to use, whatever `url` says. `queued`: a resend of it to the same address ($3, or the
 * setting's URL) is waiting or in flight already.
 */
const FIND_SQL = `
  SELECT w.id, w.settings_id,
    EXISTS (SELECT 1 FROM webhook_resends r
            WHERE r.webhook_id = w.id AND coalesce(r.url, s.url) = coalesce($3::text, s.url)) AS queued
  FROM webhooks w JOIN webhook_settings s ON s.id = w.settings_id
  WHERE w.merchant_id = $1 AND w.id = ANY ($2::uuid[]) AND s.deleted_at IS NULL
  ORDER BY w.id
  FOR KEY SHARE OF w`;

/**
 * The merchant's resends waiting or in flight, counted up to $2 through its live settings (one probe
 * of webhook_resends_endpoint_due_idx each). Those of a deleted setting are dropped unsent.
 */
const COUNT_QUEUED_SQL = `
  SELECT count(*)::int AS queued FROM (
    SELECT 1 FROM webhook_settings s JOIN webhook_resends r ON r.settings_id = s.id
    WHERE s.merchant_id = $1 AND s.deleted_at IS NULL
    LIMIT $2) q`;

const INSERT_SQL = `
  INSERT INTO webhook_resends (id, webhook_id, settings_id, url)
  SELECT gen_random_uuid(), x.webhook_id, x.settings_id, $3
  FROM unnest($1::uuid[], $2::uuid[]) AS x(webhook_id, settings_id)`;

/**
 * Queues a resend of each of `ids` that is a webhook of the merchant with a live setting; answers
 * those found. One already queued to the same address is not queued again (a request repeated while
 * its resends wait is answered the same and sends nothing more). The merchant's queued resends are
 * capped (`max`): a request that would pass the cap is refused whole, 429, queueing nothing. The
 * merchant's lock makes the count and the inserts one step for every replica: two requests at once
 * cannot both pass the cap, nor both queue the same resend.
 */
async function queue(
  manager: EntityManager,
  merchantId: string,
  ids: string[],
  url: string | null,
  max: number,
): Promise<Queued> {
  await lockInTransaction(manager, `resends-queue:${merchantId}`);
  const found = await manager.query<{ id: string; settings_id: string; queued: boolean }[]>(FIND_SQL, [
    merchantId,
    ids,
    url,
  ]);
  const fresh = found.filter((row) => !row.queued);
  if (fresh.length > 0) {
    const [{ queued }] = await manager.query<{ queued: number }[]>(COUNT_QUEUED_SQL, [merchantId, max]);
    if (queued + fresh.length > max) throw tooManyResends(max, queued, fresh.length);
    await manager.query(INSERT_SQL, [fresh.map((row) => row.id), fresh.map((row) => row.settings_id), url]);
  }
  return {
    resent: found.map((row) => row.id),
    settingsIds: [...new Set(fresh.map((row) => row.settings_id))],
  };
}

/** 429 BYRD206: not final (the queue drains), so an idempotency-key does not keep it. */
function tooManyResends(max: number, queued: number, asked: number): ApiError {
  return new ApiError(
    ErrorKind.RateLimited,
    `At most ${max} resends of a merchant may wait to be sent; ${queued} are waiting and this request ` +
      `would add ${asked}. Nothing was queued: retry once some have been sent`,
    { retryAfter: RETRY_AFTER_AT_CAP_SECONDS },
  );
}

/** The answer to a request for `ids`: those in `resent` were queued, in the request's order. */
function answer(ids: string[], resent: string[]): ResendWebhooksResponse {
  const found = new Set(resent);
  return {
    data: { resent: ids.filter((id) => found.has(id)), notFound: ids.filter((id) => !found.has(id)) },
  };
}
