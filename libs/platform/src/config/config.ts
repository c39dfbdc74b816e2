import { isIP } from 'node:net';
import { z } from 'zod';
import { parseKeyList } from '../crypto/secret-box.js';
import { parseSigningKey, parseTrustedCallers } from '../rpc/rpc-identity.js';

/** Thrown when the environment cannot start the service; its message names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const port = z.coerce.number().int().min(0).max(65535);
const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a ${protocols.map((p) => p.replace(':', '://')).join(' or ')} URL` },
  );

/**
 * A variable listing base64 32-byte keys, comma-separated (`parseKeyList`: the first seals, every
 * one opens, so a key can be rotated): WEBHOOK_SECRETS_KEYS, CARD_SEAL_KEY.
 */
export const base64KeyList = () =>
  z.string({ error: 'is required (base64 32-byte keys, comma-separated)' }).superRefine((list, ctx) => {
    try {
      parseKeyList(list);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });

/** Variables every service reads. Services extend it with their own. */
export const baseConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HTTP_HOST: z.string().default('0.0.0.0'),
  HTTP_PORT: port.default(3000),
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /**
   * The longest the database may take, in ms: a statement, a transaction left idle (its locks are
   * then freed), a wait for a pool connection; a connection silent 5 s longer is dropped. 0: none.
   */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  NATS_URL: url(['nats:', 'tls:', 'ws:', 'wss:']).default('nats://127.0.0.1:4222'),
  NATS_USER: z.string().optional(),
  NATS_PASSWORD: z.string().optional(),
  /**
   * TLS to NATS with certificates of a CA of your own: its certificate (PEM file), and a client
   * certificate and key for servers that verify clients. Unset: the system's CAs, no client certificate.
   */
  NATS_TLS_CA_FILE: z.string().min(1).optional(),
  NATS_TLS_CERT_FILE: z.string().min(1).optional(),
  NATS_TLS_KEY_FILE: z.string().min(1).optional(),
  /** Prepended to every subject; lets test runs share one NATS server without colliding. */
  NATS_SUBJECT_PREFIX: z
    .string()
    .regex(/^([A-Za-z0-9_-]+\.)*$/, 'must be empty or dot-terminated tokens such as "t42."')
    .default(''),
  EVENTS_STREAM: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('EVENTS'),
  /** Copies of every event the EVENTS stream keeps (servers of a NATS cluster); see ensureEventsStream. */
  EVENTS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  API_KEYS_BUCKET: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('API_KEYS'),
  /** The merchants' records (name, mode, checkout origins). */
  MERCHANTS_BUCKET: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('MERCHANTS'),
  /**
   * Which `X-Forwarded-For` entries describe the client: a number of proxy hops in front of the
   * service (1: the Ingress controller, or the local edge), or a comma-separated list of the
   * proxies' addresses / CIDRs (`10.0.0.0/8,fd00::/8`). The client address is the entry just left
   * of the trusted proxies; whatever a client wrote further left is ignored (a rate limit keyed on
   * it cannot be dodged by rotating the header).
   */
  TRUSTED_PROXIES: z
    .string()
    .trim()
    .default('1')
    .refine((v) => parseTrustedProxies(v) !== null, {
      message: 'must be a hop count (0-10) or comma-separated proxy addresses / CIDRs such as 10.0.0.0/8',
    })
    .transform((v) => parseTrustedProxies(v)!),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` (one object a line, for collectors) or `pretty` (for people, as npm start uses). */
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  PUBLIC_BASE_URL: url(['http:', 'https:']).default('http://127.0.0.1:8080'),
  OUTBOX_RELAY_ENABLED: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  OUTBOX_POLL_MS: z.coerce.number().int().min(10).default(250),
  /**
   * After a commit wakes the relay, how long it waits so that the events of concurrent commits go
   * out in one batch (one SELECT, one pipelined publish, one UPDATE) instead of a pass each.
   */
  OUTBOX_BATCH_WINDOW_MS: z.coerce.number().int().min(0).max(1000).default(5),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * Failures of an event's handling before it is dead-lettered (retried 1 s to 60 s apart: 25 take
   * about 20 minutes). A poison event retried for ever would hold one of its consumer's 1,000
   * unacknowledged slots for good.
   */
  EVENT_MAX_FAILURES: z.coerce.number().int().min(2).default(25),
  /**
   * How long JetStream waits for a consumer's acknowledgement before it delivers a message again (the
   * durables' `ack_wait`, set as they are created or updated at boot): what a replica killed with
   * messages in hand holds them up. Handlers take milliseconds; tests of killed replicas shorten it.
   */
  EVENT_ACK_WAIT_MS: z.coerce.number().int().min(1_000).default(30_000),
  /**
   * How long NATS may stay unreachable before /health/ready fails (0: at once). Within it the
   * service keeps serving (events wait in the outbox), so a broker restart does not take every
   * replica out of the Service together.
   */
  READINESS_NATS_GRACE_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  /**
   * How long a running request holds its idempotency key without renewing it (it renews every third
   * of that while it runs): after a crash, the key is free again within this time.
   */
  IDEMPOTENCY_LEASE_MS: z.coerce.number().int().min(300).default(15_000),
  /**
   * This service's Ed25519 private key (base64 PKCS#8 DER) signing its calls to the authenticated
   * RPC subjects (card data: rpc.tokens.*, rpc.payments.verifyCard), and opening the requests that
   * carry a card sent to it (rpc.payments.create, rpc.tokens.create), and signing its replies on the
   * subjects it serves (its callers believe no unsigned one). Needed by callers and by every serving
   * service: orders, payments and gateway-tokens.
   */
  RPC_SIGNING_KEY: z
    .string()
    .optional()
    .refine((v) => v === undefined || isValid(() => parseSigningKey(v)), {
      message: 'must be a base64 Ed25519 private key (PKCS#8 DER)',
    }),
  /**
   * `service:base64-public-key,...`: whose signed RPC requests and replies this service believes,
   * and the keys it seals its card-carrying requests to (the serving service's entries).
   */
  RPC_TRUSTED_CALLERS: z
    .string()
    .optional()
    .superRefine((v, context) => {
      if (v === undefined) return;
      try {
        parseTrustedCallers(v);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
      }
    }),
});

/** `TRUSTED_PROXIES` as Fastify's `trustProxy` takes it (hops or addresses), or null when malformed. */
export function parseTrustedProxies(value: string): number | string[] | null {
  if (/^\d+$/.test(value)) return Number(value) <= 10 ? Number(value) : null;
  const entries = value.split(',').map((entry) => entry.trim());
  return entries.every(isAddressOrCidr) ? entries : null;
}

function isAddressOrCidr(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

function isValid(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
}

export type BaseConfig = z.infer<typeof baseConfigSchema>;

/**
 * Variables of a service that keeps no data of its own (the hosted form's backend): the base ones
 * without the database and the outbox. Such a service is started with PlatformModule's
 * `database: false`.
 */
export const statelessConfigSchema = baseConfigSchema.omit({
  DATABASE_URL: true,
  DATABASE_POOL_SIZE: true,
  DATABASE_STATEMENT_TIMEOUT_MS: true,
  OUTBOX_RELAY_ENABLED: true,
  OUTBOX_POLL_MS: true,
  OUTBOX_BATCH_WINDOW_MS: true,
  EVENT_MAX_FAILURES: true,
  EVENT_ACK_WAIT_MS: true,
});

export type StatelessConfig = z.infer<typeof statelessConfigSchema>;

/**
 * Parses the environment against a schema. A missing or bad variable stops the service with a
 * sentence naming it, rather than a stack trace at first use. A variable set to the empty string is
 * taken as unset (`FOO=` in a manifest), never as 0 or as an empty value. With NODE_ENV=production,
 * the `requiredInProduction` variables must be set: their defaults (a key made up per process, the
 * local broker, a 127.0.0.1 address) only serve a machine running everything itself.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
  requiredInProduction: readonly string[] = [],
): z.infer<S> {
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const result = schema.safeParse(set);
  const unsetInProduction =
    set.NODE_ENV === 'production' ? requiredInProduction.filter((name) => set[name] === undefined) : [];
  if (result.success && unsetInProduction.length === 0) return result.data;
  const problems = (result.success ? [] : result.error.issues).map((issue) => {
    const name = issue.path.join('.');
    return set[name] === undefined
      ? `${name} is required but not set.`
      : `${name} is invalid: ${issue.message}.`;
  });
  for (const name of unsetInProduction)
    if (!problems.some((problem) => problem.startsWith(`${name} `)))
      problems.push(`${name} is required when NODE_ENV is production.`);
  throw new ConfigError(`Cannot start: ${problems.join(' ')}`);
}
