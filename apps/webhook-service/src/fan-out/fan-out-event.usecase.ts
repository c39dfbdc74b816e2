import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { toPublicContent, type EventEnvelope } from '@byrd/contracts';

/**
 * One webhook per live setting of the event's merchant whose filters match: its event list (empty =
 * all) and its payment-method list (empty = all; an event that concerns no payment method, such as
 * order.created, passes every payment-method filter). Each is due at once. One statement, in the
 * consumer's transaction with its inbox row, so the event is acked only once its webhooks exist.
 */
export const FAN_OUT_SQL = `
  INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, reference_ids,
    content, occurred_at, status, next_attempt_at, created_at)
  SELECT gen_random_uuid(), s.merchant_id, s.id, $2, $3, $4, $5, $6, $7, 'pending', now(), now()
  FROM webhook_settings s
  WHERE s.merchant_id = $1
    AND s.deleted_at IS NULL
    AND (cardinality(s.events) = 0 OR $3 = ANY (s.events))
    AND (cardinality(s.payment_methods) = 0 OR $4::text IS NULL OR $4 = ANY (s.payment_methods))
  ON CONFLICT (settings_id, event_id) DO NOTHING
  RETURNING id`;

@Injectable()
export class FanOutEvent {
  /** Returns how many webhooks were created. */
  async execute(envelope: EventEnvelope, manager: EntityManager): Promise<number> {
    const rows = await manager.query<unknown[]>(FAN_OUT_SQL, [
      envelope.merchantId,
      envelope.id,
      envelope.type,
      envelope.paymentMethod,
      envelope.referenceIds,
      JSON.stringify(toPublicContent(envelope.type, envelope.data)),
      envelope.occurredAt,
    ]);
    return rows.length;
  }
}
