import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { toPublicContent, type EventEnvelope } from '@byrd/contracts';
import { handlingTraceparent } from '@byrd/platform';

/**
 * One webhook per live setting of each event's merchant whose filters match: its event list (empty =
 * all) and its payment-method list (empty = all; an event that concerns no payment method, such as
 * order.created, passes every payment-method filter). Each is due at once. One statement for a whole
 * batch of events, in the consumer's transaction with their inbox rows, so an event is acked only
 * once its webhooks exist. The events travel as one JSON array parameter.
 */
export const FAN_OUT_SQL = `
  INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, reference_ids,
    content, occurred_at, traceparent, status, next_attempt_at, created_at)
  SELECT gen_random_uuid(), s.merchant_id, s.id, e.id, e.type, e.payment_method,
    ARRAY(SELECT jsonb_array_elements_text(e.reference_ids)), e.content, e.occurred_at, e.traceparent, 'pending',
    now(),
    -- one microsecond apart in arrival order, so "most recent first" keeps the order of a batch
    now() + (e.n - 1) * interval '1 microsecond'
  FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (id uuid, type text, merchant_id text,
    payment_method text, reference_ids jsonb, content jsonb, occurred_at timestamptz, traceparent text))
    WITH ORDINALITY AS e(id, type, merchant_id, payment_method, reference_ids, content, occurred_at,
      traceparent, n)
  JOIN webhook_settings s ON s.merchant_id = e.merchant_id
    AND s.deleted_at IS NULL
    AND (cardinality(s.events) = 0 OR e.type = ANY (s.events))
    AND (cardinality(s.payment_methods) = 0 OR e.payment_method IS NULL OR e.payment_method = ANY (s.payment_methods))
  ON CONFLICT (settings_id, event_id) DO NOTHING
  RETURNING settings_id`;

@Injectable()
export class FanOutEvent {
  /** Creates the webhooks of these events; returns the setting of each webhook created. */
  async execute(envelopes: EventEnvelope[], manager: EntityManager): Promise<string[]> {
    const events = envelopes.map((envelope) => ({
      id: envelope.id,
      type: envelope.type,
      merchant_id: envelope.merchantId,
      payment_method: envelope.paymentMethod,
      reference_ids: envelope.referenceIds,
      content: toPublicContent(envelope.type, envelope.data),
      occurred_at: envelope.occurredAt,
      // Each attempt's span joins the trace the event was handled in.
      traceparent: handlingTraceparent(envelope),
    }));
    const rows = await manager.query<{ settings_id: string }[]>(FAN_OUT_SQL, [JSON.stringify(events)]);
    return rows.map((row) => row.settings_id);
  }
}
