import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createIndexConcurrently, dropIndexConcurrently } from '@byrd/platform';

/**
 * The claim reads each endpoint's due webhooks (docs/webhook-fairness.md): `webhooks_endpoint_due_idx`
 * orders every setting's pending webhooks by due time, so one endpoint's backlog of 100 000 rows
 * costs another endpoint's claim nothing. It replaces `webhooks_due_idx` (due time alone): with both,
 * the planner may read one endpoint's rows in the global order and filter past another's backlog,
 * and each write would keep one index more.
 *
 * Built CONCURRENTLY (outside a transaction), so a large table keeps taking writes meanwhile; an
 * index left invalid by an interrupted build is dropped and built again.
 */
export class EndpointDueIndex1764700000000 implements MigrationInterface {
  name = 'EndpointDueIndex1764700000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      q,
      'webhooks_endpoint_due_idx',
      `ON webhooks (settings_id, next_attempt_at) WHERE status = 'pending'`,
    );
    await dropIndexConcurrently(q, 'webhooks_due_idx');
  }

  async down(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(
      q,
      'webhooks_due_idx',
      `ON webhooks (next_attempt_at) WHERE status = 'pending'`,
    );
    await dropIndexConcurrently(q, 'webhooks_endpoint_due_idx');
  }
}
