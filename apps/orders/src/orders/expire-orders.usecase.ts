import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OPEN_ORDER_STATUSES } from '@byrd/contracts';
import { PeriodicSweep } from '@byrd/platform';
import { ORDERS_CONFIG, type OrdersConfig } from '../config.js';
import { Order } from './order.entity.js';
import { OrderEventRecorder } from './order-events.js';

const BATCH_SIZE = 100;
/**
 * The open statuses as SQL literals (constants, not input), written out so the planner sees the
 * predicate of the partial index orders_expiry_idx.
 */
const OPEN_STATUSES_SQL = OPEN_ORDER_STATUSES.map((status) => `'${status}'`).join(', ');

/**
 * Orders past `expiresAt` with no money taken or held become `expired` and announce `order.expired`.
 * The sweep reads the database, not timers, so it survives restarts; SKIP LOCKED lets replicas share it.
 */
@Injectable()
export class ExpireOrders extends PeriodicSweep {
  protected readonly sweepName = 'Expiry sweep';

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: OrderEventRecorder,
    @Inject(ORDERS_CONFIG) private readonly config: OrdersConfig,
  ) {
    super();
  }

  protected intervalMs(): number {
    return this.config.ORDER_EXPIRY_SWEEP_MS;
  }

  /**
   * Expires due orders in batches; returns how many expired. Shutdown stops it between batches (a
   * backlog would otherwise hold SIGTERM until SIGKILL); the next run, on any replica, goes on.
   */
  async execute(now = new Date()): Promise<number> {
    let total = 0;
    while (!this.stopping) {
      const expired = await this.dataSource.transaction(async (manager) => {
        const due: Order[] = await manager
          .getRepository(Order)
          .createQueryBuilder('o')
          .where(`o.status IN (${OPEN_STATUSES_SQL})`)
          .andWhere('o.expires_at <= :now', { now })
          // A locked order is being charged (or holds its money): it expires once the attempt fails.
          .andWhere('o.payment_lock_id IS NULL')
          // Money taken, or held by a pre-authorisation, keeps it; a successful release or refund
          // alone does not (a pre-auth released in full reads Canceled), nor a late payment that
          // payments gave back at once (not counted, as in deriveOrderStatus).
          .andWhere(
            `NOT EXISTS (SELECT 1 FROM order_transactions t WHERE t.order_id = o.id AND t.status = 'Success'
               AND t.operation_type IN ('Payment', 'Capture', 'PreAuth') AND NOT t.refunded_at_once)`,
          )
          .orderBy('o.expires_at')
          .limit(BATCH_SIZE)
          .setLock('pessimistic_write')
          .setOnLocked('skip_locked')
          .getMany();
        for (const order of due) await this.events.close(manager, order, 'expired', now);
        return due.length;
      });
      total += expired;
      if (expired < BATCH_SIZE) break;
    }
    if (total > 0) this.events.flush();
    return total;
  }
}
