import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { guidOf, type PageRequest, type WebhookAttempt, type WebhookRecord } from '@byrd/contracts';
import { ApiError, pageOf, pageOfRows, type MerchantContext, type Page } from '@byrd/platform';
import { WebhookSettingsRow } from '../settings/webhook-settings.entity.js';
import { SettingsSecrets } from '../secrets/settings-secrets.js';
import { WebhookAttemptRow, WebhookRow } from './webhook.entity.js';
import { presentAttempt, presentWebhook } from './webhook.presenter.js';

/** The merchant's webhooks, most recent first, optionally those of one order/transaction/chargeback. */
@Injectable()
export class ListWebhooks {
  constructor(private readonly dataSource: DataSource) {}

  async execute(
    merchant: MerchantContext,
    referenceId: string | undefined,
    page: PageRequest,
  ): Promise<Page<WebhookRecord>> {
    const query = this.dataSource
      .getRepository(WebhookRow)
      .createQueryBuilder('w')
      .where('w.merchant_id = :merchantId', { merchantId: merchant.merchantId });
    if (referenceId)
      query.andWhere('w.reference_ids @> ARRAY[:referenceId]::text[]', {
        referenceId: asStored(referenceId),
      });
    query.orderBy('w.created_at', 'DESC').addOrderBy('w.id', 'DESC');
    const [rows, total] = await pageOfRows(query, (page.page - 1) * page.pageSize, page.pageSize);
    return pageOf(page, rows.map(presentWebhook), total);
  }
}

/**
 * A reference id as events store it: GUIDs are lowercase there, and a client may send one uppercase
 * (as the API's GUID parameters accept). Anything else is matched as given.
 */
function asStored(referenceId: string): string {
  return guidOf(referenceId) ?? referenceId;
}

/** The merchant's webhook or 404 (another merchant's id answers like a missing one); `id` is a GUID (GuidParam). */
export async function findWebhook(
  dataSource: DataSource,
  merchantId: string,
  id: string,
): Promise<WebhookRow> {
  const row = await dataSource.getRepository(WebhookRow).findOneBy({ id, merchantId });
  if (!row) throw ApiError.notFound(`Webhook ${id}`);
  return row;
}

/** Every attempt of one webhook (scheduled and resends), most recent first. */
@Injectable()
export class ListAttempts {
  constructor(
    private readonly dataSource: DataSource,
    private readonly secrets: SettingsSecrets,
  ) {}

  async execute(
    merchant: MerchantContext,
    webhookId: string,
    page: PageRequest,
  ): Promise<Page<WebhookAttempt>> {
    const webhook = await findWebhook(this.dataSource, merchant.merchantId, webhookId);
    const settings = await this.dataSource
      .getRepository(WebhookSettingsRow)
      .findOneByOrFail({ id: webhook.settingsId });
    const opened = this.secrets.openRowForAnswer(settings);
    const [attempts, total] = await this.dataSource.getRepository(WebhookAttemptRow).findAndCount({
      where: { webhookId: webhook.id },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: (page.page - 1) * page.pageSize,
      take: page.pageSize,
    });
    return pageOf(
      page,
      attempts.map((a) => presentAttempt(a, webhook, opened)),
      total,
    );
  }
}
