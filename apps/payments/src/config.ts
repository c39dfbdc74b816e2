import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { base64KeyList, baseConfigSchema, paymentAttemptLimitSettings } from '@byrd/platform';

export const paymentsConfigSchema = baseConfigSchema
  .extend({
    HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3002),
    /**
     * Which acquirer authorises payments (PaymentsModule wires it): only `sandbox` ships; a real one
     * plugs in behind the Acquirer interface as one more name here and in PaymentsModule.
     */
    ACQUIRER: z
      .enum(['sandbox'], { message: 'must name an acquirer that ships: sandbox' })
      .default('sandbox'),
    /** Which 3DS server authenticates shoppers (PaymentsModule wires it): only `sandbox` ships. */
    THREE_DS_PROVIDER: z
      .enum(['sandbox'], { message: 'must name a 3DS server that ships: sandbox' })
      .default('sandbox'),
    /**
     * AES-256 keys (base64, 32 bytes; comma-separated, the first sealing, each opening) sealing a card
     * while its shopper is in a 3DS challenge: the only time payments keeps a card number, encrypted,
     * until it authorises. CVV is never kept. A list so the key can be rotated (docs/operations.md).
     */
    CARD_SEAL_KEY: base64KeyList().default(() => randomBytes(32).toString('base64')),
    /** How long a shopper has to finish 3DS (minutes of real time). */
    THREE_DS_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .default(15 * 60_000),
    /**
     * How long one request's check of a shopper's 3DS code with the issuer keeps other submissions of
     * the same challenge (a double click, two tabs, another replica) waiting for its outcome instead of
     * asking the issuer again. Longer than the issuer takes to answer; past it, a check whose process
     * died is made again by the next submission, so the challenge is never stuck.
     */
    THREE_DS_CHECK_LEASE_MS: z.coerce.number().int().min(100).default(30_000),
    /**
     * How long a live request waits for the acquirer before answering TemporaryFailed (BYRD203); the
     * outcome is then settled by the recovery, which must not start before: see ACQUIRER_RECOVERY_AFTER_MS.
     */
    ACQUIRER_TIMEOUT_MS: z.coerce.number().int().min(100).default(20_000),
    /** Longer than ACQUIRER_TIMEOUT_MS: a stopping replica lets the payments at the acquirer finish. */
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(25_000),
    /**
     * A write-ahead row still waiting for the acquirer's answer this long after it was sent is settled
     * by the recovery worker (crash, timeout): it asks the acquirer by the transaction id and records
     * the outcome, or voids it when the request never arrived. Longer than ACQUIRER_TIMEOUT_MS.
     */
    ACQUIRER_RECOVERY_AFTER_MS: z.coerce.number().int().min(100).default(60_000),
    /** How often each replica looks for such rows (they share them with SKIP LOCKED). */
    ACQUIRER_RECOVERY_SWEEP_MS: z.coerce.number().int().min(50).default(10_000),
    /**
     * A Multibanco or MB WAY payment still waiting for the shopper this long after it lapsed (its
     * expiry notice lost, or the process killed between the processor and our record) is voided at
     * the processor and canceled (EndLapsedAttempts).
     */
    ASYNC_LAPSE_GRACE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(15 * 60_000),
    /** How often each replica looks for such payments. */
    ASYNC_LAPSE_SWEEP_MS: z.coerce.number().int().min(50).default(60_000),
    /** How often each replica cancels the two-step card payments not paid (`/pay`) before they expired. */
    UNPAID_PAYMENT_SWEEP_MS: z.coerce.number().int().min(50).default(60_000),
    /** How often each replica saves the cards ("save my card") whose paying request could not. */
    CARD_SAVE_SWEEP_MS: z.coerce.number().int().min(50).default(60_000),
    /** The sandbox acquirer holds every answer this long after recording it (crash and recovery drills). */
    SANDBOX_ACQUIRER_DELAY_MS: z.coerce.number().int().min(0).default(0),
    /**
     * Browsers' `?checkoutKey=` payment attempts, per client address and per order link: the hosted
     * form's settings, counted in its bucket (CheckoutAttemptLimitGuard).
     */
    ...paymentAttemptLimitSettings,
  })
  .refine((c) => c.ACQUIRER_RECOVERY_AFTER_MS > c.ACQUIRER_TIMEOUT_MS, {
    message: 'ACQUIRER_RECOVERY_AFTER_MS must be longer than ACQUIRER_TIMEOUT_MS',
    path: ['ACQUIRER_RECOVERY_AFTER_MS'],
  });

export type PaymentsConfig = z.infer<typeof paymentsConfigSchema>;
export const PAYMENTS_CONFIG = Symbol('PAYMENTS_CONFIG');

/** Set in production, never defaulted (runHttpService refuses to start without them): a card-seal key every replica shares, its RPC identity, the address shoppers reach it at. */
export const REQUIRED_IN_PRODUCTION = [
  'CARD_SEAL_KEY',
  'RPC_SIGNING_KEY',
  'RPC_TRUSTED_CALLERS',
  'PUBLIC_BASE_URL',
] as const;
