import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, IsNull, type EntityManager } from 'typeorm';
import {
  type CreateWebhookSettingsRequest,
  type DeleteWebhookSettingsResponse,
  type WebhookSettingsListResponse,
  type WebhookSettingsResponse,
} from '@byrd/contracts';
import {
  ApiError,
  createdWithinKeyRetention,
  lockInTransaction,
  Refusal,
  storeAnswerWithWork,
  type KeyClaim,
  type MerchantContext,
} from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { CANCELED } from '../delivery/delivery.repository.js';
import { DeliveryWorker } from '../delivery/delivery-worker.js';
import { RefusedUrlError, UrlGuard } from '../egress/url-guard.js';
import { SettingsSecrets } from '../secrets/settings-secrets.js';
import { deliveryCredential, newSigningSecret } from './credentials.js';
import { presentSettings } from './settings.presenter.js';
import { WebhookSettingsRow } from './webhook-settings.entity.js';

/** Turns the SSRF guard's refusal into the 400 BYRD900 naming the field. */
export async function vetReceiverUrl(guard: UrlGuard, field: string, url: string, merchant: MerchantContext) {
  try {
    await guard.vet(url, merchant.mode);
  } catch (error) {
    if (error instanceof RefusedUrlError) throw ApiError.invalidField(field, `${field} ${error.message}`);
    throw error;
  }
}

/** The merchant's live settings, counted up to $2 (the partial index of live settings per merchant). */
const COUNT_LIVE_SETTINGS = `
  SELECT count(*)::int AS live FROM (
    SELECT 1 FROM webhook_settings WHERE merchant_id = $1 AND deleted_at IS NULL LIMIT $2) s`;

@Injectable()
export class CreateSettings {
  constructor(
    private readonly dataSource: DataSource,
    private readonly guard: UrlGuard,
    private readonly secrets: SettingsSecrets,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
  ) {}

  async execute(
    merchant: MerchantContext,
    request: CreateWebhookSettingsRequest,
    idempotencyKey?: string,
  ): Promise<WebhookSettingsResponse> {
    if (idempotencyKey) {
      // A retry, or a replay (the key keeps no copy of this answer: AnswerHoldsSecrets): the setting
      // the key made answers as it was made, whatever its URL resolves to now.
      const earlier = await this.settingsOfKey(
        this.dataSource.manager,
        merchant.merchantId,
        idempotencyKey,
        request,
      );
      if (earlier) return { data: presentSettings(this.secrets.openRowForAnswer(earlier), true) };
    }
    await vetReceiverUrl(this.guard, 'url', request.url, merchant);
    const row = this.dataSource.getRepository(WebhookSettingsRow).create({
      id: randomUUID(),
      merchantId: merchant.merchantId,
      merchantMode: merchant.mode,
      url: request.url,
      credentialType: request.credentialType,
      ...deliveryCredential(request),
      signingSecret: newSigningSecret(),
      events: request.events ?? [],
      paymentMethods: request.paymentMethods ?? [],
      storeId: request.storeId ?? null,
      retryOn4xx: request.retryOn4xx ?? true,
      createdAt: new Date(),
      deletedAt: null,
      idempotencyKey: idempotencyKey ?? null,
    });
    const earlier = await this.dataSource.transaction(async (manager) => {
      // One create of the merchant at a time: requests of one key make one setting (the later
      // answers the earlier's), and creates at once cannot all pass the cap. Deletes do not take it:
      // they only make room.
      await lockInTransaction(manager, `settings-create:${merchant.merchantId}`);
      if (idempotencyKey) {
        // Before the cap: a retry of a create that succeeded answers its setting, even at the cap.
        const found = await this.settingsOfKey(manager, merchant.merchantId, idempotencyKey, request);
        if (found) return found;
      }
      await this.refuseAtCap(manager, merchant.merchantId);
      await manager.getRepository(WebhookSettingsRow).insert(this.secrets.sealRow(row));
      return null;
    });
    return { data: presentSettings(earlier ? this.secrets.openRowForAnswer(earlier) : row, true) };
  }

  /**
   * Fan-out writes one webhook per event per matching setting, in a consumer batch that every
   * merchant's events share: the live settings of one merchant are capped so that none of its
   * batches can grow without bound and hold up everyone's webhooks. Deleted settings receive
   * nothing, so they do not count.
   */
  private async refuseAtCap(manager: EntityManager, merchantId: string): Promise<void> {
    const max = this.config.WEBHOOK_SETTINGS_MAX_PER_MERCHANT;
    // Counts no further than the cap: a merchant far past it (settings made before it) costs no more.
    const [{ live }] = await manager.query<{ live: number }[]>(COUNT_LIVE_SETTINGS, [merchantId, max]);
    if (live < max) return;
    throw Refusal.limitReached(
      `A merchant may have at most ${max} webhook settings, and this one has as many already: delete one ` +
        `it no longer needs (DELETE /api/v1/settings/{id}; GET /api/v1/settings lists them) to subscribe another`,
    );
  }

  /**
   * The setting an earlier request with this idempotency-key created, within the key's retention,
   * deleted since or not (a retry must not subscribe the URL again). A replay of that request, or a
   * retry of one that committed it but died before its key was answered, answers that setting. The
   * same key for another URL is refused, as the key's stored answer would be.
   */
  private async settingsOfKey(
    manager: EntityManager,
    merchantId: string,
    idempotencyKey: string,
    request: CreateWebhookSettingsRequest,
  ): Promise<WebhookSettingsRow | null> {
    const earlier = await manager.getRepository(WebhookSettingsRow).findOne({
      where: {
        merchantId,
        idempotencyKey,
        createdAt: createdWithinKeyRetention(),
      },
      order: { createdAt: 'DESC' },
    });
    if (earlier && earlier.url !== request.url) {
      throw Refusal.idempotencyKeyReused(
        `This idempotency-key was already used for webhook settings ${earlier.id} of another URL`,
      );
    }
    return earlier;
  }
}

/**
 * A live setting of the merchant, or 404 (another merchant's id answers exactly like a missing one);
 * `id` is a GUID (GuidParam).
 */
export async function findSettings(dataSource: DataSource, merchantId: string, id: string) {
  const row = await dataSource
    .getRepository(WebhookSettingsRow)
    .findOneBy({ id, merchantId, deletedAt: IsNull() });
  if (!row) throw ApiError.notFound(`Webhook settings ${id}`);
  return row;
}

@Injectable()
export class ListSettings {
  constructor(
    private readonly dataSource: DataSource,
    private readonly secrets: SettingsSecrets,
  ) {}

  async execute(merchant: MerchantContext): Promise<WebhookSettingsListResponse> {
    const rows = await this.dataSource.getRepository(WebhookSettingsRow).find({
      where: { merchantId: merchant.merchantId, deletedAt: IsNull() },
      order: { createdAt: 'DESC' },
    });
    return { data: rows.map((row) => presentSettings(this.secrets.openRowForAnswer(row))) };
  }
}

@Injectable()
export class GetSettings {
  constructor(
    private readonly dataSource: DataSource,
    private readonly secrets: SettingsSecrets,
  ) {}

  async execute(merchant: MerchantContext, id: string): Promise<WebhookSettingsResponse> {
    const row = await findSettings(this.dataSource, merchant.merchantId, id);
    return { data: presentSettings(this.secrets.openRowForAnswer(row)) };
  }
}

/** Pending webhooks of a deleted setting canceled per statement (see `DeleteSettings`). */
const CANCEL_BATCH = 2_000;

/** Up to $2 pending webhooks of setting $1, canceled; those locked by a delivery being recorded are left for the next batch. */
const CANCEL_PENDING_BATCH = `
  WITH batch AS (
    SELECT id FROM webhooks WHERE settings_id = $1 AND status = 'pending'
     ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
  UPDATE webhooks w SET ${CANCELED} FROM batch WHERE w.id = batch.id`;

/** The pending webhooks of setting $1 the batches skipped: a few, each locked by a short statement. */
const CANCEL_PENDING_LEFT = `UPDATE webhooks w SET ${CANCELED} WHERE settings_id = $1 AND status = 'pending'`;

/**
 * Deleting a setting stops it: no new webhooks are created for it, and its webhooks still waiting
 * for a retry are canceled (their history stays readable until retention removes it). A webhook a
 * concurrent fan-out commits after this, and a resend of any of its webhooks, the claim cancels or
 * drops instead of sending (delivery.repository.ts).
 *
 * The setting is marked deleted first, then its pending webhooks are canceled in short batches: a
 * dead endpoint's backlog can be hundreds of thousands, and one statement for all of them held every
 * row for as long as it ran (past the statement timeout: a 500, and nothing canceled), while each
 * delivery of the setting being recorded waited for it, and with it the replica's recorder, which
 * writes one batch at a time for every merchant. A batch skips rows a recorder holds (the next one
 * takes them); whatever a request that dies leaves pending, the claim cancels when it comes due.
 * The endpoint's circuit is dropped from this replica's memory at once, and from the others' at
 * their next discovery (DeliveryWorker).
 */
@Injectable()
export class DeleteSettings {
  private readonly logger = new Logger(DeleteSettings.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly worker: DeliveryWorker,
  ) {}

  /** `claim`: the request's idempotency-key, whose answer commits with the delete. */
  async execute(
    merchant: MerchantContext,
    id: string,
    claim?: KeyClaim,
  ): Promise<DeleteWebhookSettingsResponse> {
    const row = await findSettings(this.dataSource, merchant.merchantId, id);
    const answer: DeleteWebhookSettingsResponse = { data: { id: row.id, deleted: true } };
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`UPDATE webhook_settings SET deleted_at = now() WHERE id = $1`, [row.id]);
      // Else a retry after a death between the commit and the answer would find it gone: 404.
      await storeAnswerWithWork(manager, claim, 200, answer);
    });
    // Its circuit here goes with it (the other replicas drop theirs at discovery, finding it deleted).
    this.worker.forget([row.id]);
    for (;;) {
      // An UPDATE answers [rows, how many it changed].
      const [, canceled] = await this.dataSource.query<[unknown, number]>(CANCEL_PENDING_BATCH, [
        row.id,
        CANCEL_BATCH,
      ]);
      if (canceled === 0) break;
    }
    // The batches skip rows a claim or a recorder holds for a moment; waited for here, so a read
    // right after the answer finds none of them pending. Should this fail (a deadlock with another
    // delete of the setting, a timeout), the claim cancels them when they come due instead.
    await this.dataSource.query(CANCEL_PENDING_LEFT, [row.id]).catch((error: unknown) => {
      this.logger.warn(`Setting ${row.id}: pending webhooks left for the claim to cancel: ${String(error)}`);
    });
    return answer;
  }
}
