import { Order, OrderTransaction } from './orders/order.entity.js';
import { Orders1763800000100 } from './migrations/1763800000100-orders.js';
import { PaymentLock1764500000100 } from './migrations/1764500000100-payment-lock.js';
import { OrderIdempotencyKeys1764800000100 } from './migrations/1764800000100-order-idempotency-keys.js';
import { RefundedAtOnce1764800000200 } from './migrations/1764800000200-refunded-at-once.js';
import { OrderRequestHash1765300000100 } from './migrations/1765300000100-order-request-hash.js';

export const ORDERS_ENTITIES = [Order, OrderTransaction];
export const ORDERS_MIGRATIONS = [
  Orders1763800000100,
  PaymentLock1764500000100,
  OrderIdempotencyKeys1764800000100,
  RefundedAtOnce1764800000200,
  OrderRequestHash1765300000100,
];
