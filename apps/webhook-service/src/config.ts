import { z } from 'zod';
import { base64KeyList, baseConfigSchema } from '@byrd/platform';
import { invalidAllowListEntries } from './egress/address-policy.js';

const ms = (min: number) => z.coerce.number().int().min(min);
const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true');

const DAY_MS = 86_400_000;

/**
 * Keys sealing the receivers' credentials and the signing secrets in the database: comma-separated
 * base64 32-byte keys (e.g. `openssl rand -base64 32`). The first seals; the others still open
 * what they sealed, so a new key goes first, `webhooks reseal-secrets` seals everything again with
 * it, and an old one is dropped once that command says nothing uses it (docs/operations.md).
 */
const secretsKeys = base64KeyList();

export const webhookConfigSchema = baseConfigSchema
  .extend({
    HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3004),
    /**
     * How long one minute of the retry schedule of SPEC.md "Limits" lasts (after the n-th failed
     * attempt the next one waits min(n, 60) minutes): the code calls it `minuteMs`; the variable
     * keeps its published name. Tests shrink it to run the whole schedule in seconds.
     */
    WEBHOOK_RETRY_UNIT_MS: ms(1).default(60_000),
    /** A receiver that has not answered within this time has failed the attempt. */
    WEBHOOK_TIMEOUT_MS: ms(100).default(10_000),
    /** After HTTP, consumers and the outbox, the deliveries in flight finish (each ≤ WEBHOOK_TIMEOUT_MS). */
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(25_000),
    /**
     * How long a claimed delivery belongs to its worker. A worker that dies mid-delivery loses the
     * claim after this time and another worker retries. Must exceed WEBHOOK_TIMEOUT_MS.
     */
    WEBHOOK_LEASE_MS: ms(200).default(30_000),
    /** Longest idle wait between two looks for due deliveries (new events wake the worker at once). */
    WEBHOOK_POLL_MS: ms(5).default(250),
    /** Deliveries one process runs at the same time. */
    WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(128),
    /**
     * Most deliveries one process runs at the same time at one endpoint (a setting's URL); by default
     * half of WEBHOOK_CONCURRENCY, so a receiver that hangs leaves the other half to the rest. Below
     * it, endpoints with work share the slots equally (docs/webhook-fairness.md).
     */
    WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).optional(),
    /** Failed attempts in a row at one endpoint that open its circuit (its deliveries wait). */
    WEBHOOK_BREAKER_FAILURES: z.coerce.number().int().min(1).default(10),
    /**
     * How long an open circuit holds an endpoint's deliveries before one probe is sent; each failed
     * probe doubles it, up to 20 times this. Nothing waiting is dropped or counted as an attempt.
     */
    WEBHOOK_BREAKER_COOLDOWN_MS: ms(1).default(30_000),
    /** Most deliveries claimed by one query. */
    WEBHOOK_CLAIM_BATCH: z.coerce.number().int().min(1).max(1_000).default(100),
    /** false = this replica serves the API and fans events out, but delivers nothing. */
    WEBHOOK_DELIVERY_ENABLED: flag(true),
    /**
     * Receivers allowed although they are not on the public internet: comma-separated host names or
     * IP addresses (matched against the URL's host) and CIDR ranges (matched against the resolved
     * addresses), e.g. "hooks.internal,10.20.0.0/16".
     */
    WEBHOOK_ALLOWED_HOSTS: z
      .string()
      .default('')
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim().toLowerCase())
          .filter(Boolean),
      )
      .superRefine((entries, ctx) => {
        const bad = invalidAllowListEntries(entries);
        if (bad.length)
          ctx.addIssue({
            code: 'custom',
            message: `${bad.join(', ')} is not a host name, an IP address or a CIDR range`,
          });
      }),
    /**
     * Development only: allow receivers on loopback and private networks (127.0.0.0/8, 10/8,
     * 172.16/12, 192.168/16, 100.64/10, fc00::/7, ::1). Link-local and cloud metadata addresses stay
     * refused. `npm start` sets it so localhost receivers work.
     */
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: flag(false),
    WEBHOOK_SECRETS_KEYS: secretsKeys,
    /** Successful webhooks (and their attempts) are removed this long after creation. */
    WEBHOOK_RETENTION_SUCCEEDED_MS: ms(1).default(7 * DAY_MS),
    /** Failed webhooks (and their attempts) are removed this long after creation. */
    WEBHOOK_RETENTION_FAILED_MS: ms(1).default(30 * DAY_MS),
    /** How often the retention sweep runs. */
    WEBHOOK_RETENTION_SWEEP_MS: ms(10).default(600_000),
    /**
     * How long a `listen` client may leave a delivery unread before its stream is ended (the CLI
     * reconnects): events are read from NATS only as fast as the client takes them, so one that
     * stops reading holds a bounded amount of this replica's memory, for this long at most.
     */
    LISTEN_DRAIN_TIMEOUT_MS: ms(100).default(30_000),
    /** Rows removed per statement by the retention sweep (small, so it never blocks delivery). */
    WEBHOOK_RETENTION_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
    /**
     * Most live (not deleted) webhook settings one merchant may have; a create past it is refused
     * (422 BYRD205) until one is deleted. Fan-out writes one webhook per event per matching setting,
     * in a consumer batch every merchant's events share: a merchant with thousands of settings would
     * make every batch holding its events slow for everyone.
     */
    WEBHOOK_SETTINGS_MAX_PER_MERCHANT: z.coerce.number().int().min(1).max(10_000).default(100),
    /**
     * Most resends one merchant may have queued (asked, not yet sent); a resend request that would
     * queue more is refused whole (429 BYRD206 with Retry-After) until some have gone out. Each
     * resend is a signed POST the platform makes, to any URL the merchant names, and keeps its
     * webhook from the retention sweep while queued: without a cap a loop of requests would turn the
     * platform into a request flood and grow the table without bound.
     */
    WEBHOOK_RESENDS_MAX_PER_MERCHANT: z.coerce.number().int().min(1).max(100_000).default(1_000),
  })
  .refine((c) => c.WEBHOOK_LEASE_MS > c.WEBHOOK_TIMEOUT_MS, {
    path: ['WEBHOOK_LEASE_MS'],
    message: 'must be greater than WEBHOOK_TIMEOUT_MS (a lease must outlive the request it covers)',
  });

export type WebhookConfig = z.infer<typeof webhookConfigSchema>;
export const WEBHOOK_CONFIG = Symbol('WEBHOOK_CONFIG');

/** What `webhooks reseal-secrets` needs: the database and the keys, nothing of the running service. */
export const resealSecretsConfigSchema = baseConfigSchema
  .pick({ DATABASE_URL: true })
  .extend({ WEBHOOK_SECRETS_KEYS: secretsKeys });
