import { z } from 'zod';
import { baseConfigSchema } from '@byrd/platform';

export const ordersConfigSchema = baseConfigSchema.extend({
  HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  /** Hosted form address; an order's checkoutUrl is built on it. */
  CHECKOUT_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .default('http://127.0.0.1:8080/checkout'),
  /** Real length of one minute of `expiresIn`; tests shrink it to run expiry in seconds. */
  ORDER_EXPIRY_UNIT_MS: z.coerce.number().int().min(1).default(60_000),
  /** How often expired orders are looked for. */
  ORDER_EXPIRY_SWEEP_MS: z.coerce.number().int().min(10).default(10_000),
});

export type OrdersConfig = z.infer<typeof ordersConfigSchema>;
export const ORDERS_CONFIG = Symbol('ORDERS_CONFIG');

/** Set in production, never defaulted (runHttpService refuses to start without them): its RPC identity (orders signs its answers to payments). */
export const REQUIRED_IN_PRODUCTION = ['RPC_SIGNING_KEY', 'RPC_TRUSTED_CALLERS'] as const;
