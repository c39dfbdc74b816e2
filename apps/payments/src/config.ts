import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { baseConfigSchema } from '@byrd/platform';

export const paymentsConfigSchema = baseConfigSchema.extend({
  HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3002),
  /** Which acquirer authorises payments: only `sandbox` ships; a real one plugs in behind the same interface. */
  ACQUIRER: z.enum(['sandbox']).default('sandbox'),
  /** Which 3DS server authenticates shoppers. */
  THREE_DS_PROVIDER: z.enum(['sandbox']).default('sandbox'),
  /**
   * AES-256 key (base64, 32 bytes) sealing a card while its shopper is in a 3DS challenge: the only
   * time payments keeps a card number, encrypted, until it authorises. CVV is never kept.
   */
  CARD_SEAL_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, { message: 'must be 32 bytes, base64-encoded' })
    .default(() => randomBytes(32).toString('base64')),
  /** How long a shopper has to finish 3DS (minutes of real time). */
  THREE_DS_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(15 * 60_000),
});

export type PaymentsConfig = z.infer<typeof paymentsConfigSchema>;
export const PAYMENTS_CONFIG = Symbol('PAYMENTS_CONFIG');
