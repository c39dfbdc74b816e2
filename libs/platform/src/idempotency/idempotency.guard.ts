import { createHash, createHmac, randomUUID } from 'node:crypto';
import {
  Inject,
  SetMetadata,
  Injectable,
  Logger,
  type CanActivate,
  type ExecutionContext,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { MAX_IDEMPOTENCY_KEY_LENGTH, refusedInputFields } from '@byrd/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DataSource, MoreThan, type EntityManager, type FindOperator } from 'typeorm';
import { columnsOf, GroupCommit } from '../database/group-commit.js';
import { queryPrepared, queryReplanned } from '../database/prepared.js';
import { lockInTransaction } from '../database/transaction-lock.js';
import { ApiError } from '../errors/api-error.js';
import { invalidFields } from '../errors/validation.js';
import { Refusal } from '../errors/refusals.js';
import type { ErrorBody } from '../errors/error-body.js';
import type { AuthenticatedRequest } from '../auth/api-key.guard.js';
import { isGuid } from '../auth/api-keys.js';
import type { BaseConfig } from '../config/config.js';
import { PLATFORM_CONFIG } from '../messaging/tokens.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** How long a key's answer is kept and replayed. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 3_600_000;
const RETENTION = `${IDEMPOTENCY_RETENTION_MS} milliseconds`;

/**
 * `createdAt` of a row a request with an idempotency-key made, still within the key's retention: a
 * retry of that request whose answer was lost (it died after its commit) finds the row by its key.
 */
export function createdWithinKeyRetention(): FindOperator<Date> {
  return MoreThan(new Date(Date.now() - IDEMPOTENCY_RETENTION_MS));
}

/**
 * Holds, until `manager`'s transaction ends, the lock of one merchant's idempotency-key for rows of
 * `kind`: a use case that looks up the row its key made and inserts one if there is none does both
 * under it, so two requests of one key that run at once (the first stalled past its key's lease and
 * the merchant's retry took the key over) make one row, and the later answers the earlier's.
 */
export async function lockKeyInTransaction(
  manager: EntityManager,
  kind: string,
  merchantId: string,
  idempotencyKey: string,
): Promise<void> {
  await lockInTransaction(manager, `${kind}:${merchantId}:${idempotencyKey}`);
}

/**
 * The methods whose `idempotency-key` is kept. DELETE too: its work is done once, but its answer is
 * not the same twice (the retry of a delete whose answer was lost would find nothing and answer 404),
 * so a retry under the key replays the first answer instead; a delete's use case stores that answer
 * in its own transaction (`storeAnswerWithWork`), for a process killed between its commit and
 * `answered`.
 */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['POST', 'DELETE']);

const ANSWER_HOLDS_SECRETS = 'byrd:idempotency:answer-holds-secrets';

/**
 * For a POST whose answer carries secrets (a generated password, a signing secret): its key keeps
 * no copy of the answer, which would lie unsealed in `idempotency_keys` for the key's retention.
 * A replay runs the handler again instead, so its use case must answer the same from what the first
 * run stored under the key (it finds its own row by the key, and opens its sealed secrets).
 */
export const AnswerHoldsSecrets = () => SetMetadata(ANSWER_HOLDS_SECRETS, true);

/**
 * The scope a browser's keys are kept under: its checkout key, hashed. The key itself keys the
 * request's hash (`canActivate`), so it must not lie beside it in the table.
 */
export function checkoutScopeOf(checkoutKey: string): string {
  return `checkout:${createHash('sha256').update(checkoutKey.toLowerCase()).digest('hex')}`;
}

/** The request's `idempotency-key` header, if it sent one. */
export function idempotencyKeyOf(request: {
  headers: Record<string, string | string[] | undefined>;
}): string | undefined {
  const header = request.headers[IDEMPOTENCY_HEADER];
  return Array.isArray(header) ? header[0] : header;
}

/**
 * An idempotency-key as the platform takes one, wherever it comes from (the header, or a key a
 * service forwards over RPC, named `field`): 1 to 255 characters, else 400 BYRD900 on `field`.
 */
export function checkedIdempotencyKey(key: unknown, field: string = IDEMPOTENCY_HEADER): string | undefined {
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw ApiError.invalidField(field, `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  }
  return key;
}

/**
 * A stored answer, replayed through the exception filter with its original status (the guard that
 * finds it can only let the request through or throw).
 */
export class ReplayedError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super((body as Partial<ErrorBody> | null)?.message ?? 'replayed answer');
  }
}

type StoredAnswer = { request_hash: string; response_status: number | null; response_body: unknown };
/** An answer to store: the statement's parameters, a column each. */
type AnswerRow = [scope: string, key: string, owner: string, status: number, body: string];

/**
 * Stores the answers of a batch of requests, each only while its request still owns its key. One
 * statement for the batch (group commit): requests that finish together share one round trip and
 * one WAL flush, and each still waits for its own answer to be committed.
 */
const STORE_ANSWERS = `
  UPDATE idempotency_keys k
     SET response_status = a.status, response_body = a.body, lease_owner = NULL, lease_until = NULL
    FROM unnest($1::text[], $2::text[], $3::uuid[], $4::int[], $5::jsonb[]) AS a(scope, key, owner, status, body)
   WHERE k.merchant_id = a.scope AND k.key = a.key AND k.lease_owner = a.owner`;
/** Expired keys removed by one statement of the purge. */
const PURGE_BATCH = 5_000;
const PURGE_EXPIRED_BATCH = `
  WITH gone AS (
    DELETE FROM idempotency_keys WHERE (merchant_id, key) IN (
      SELECT merchant_id, key FROM idempotency_keys WHERE created_at < now() - interval '${RETENTION}'
       ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED)
    RETURNING 1)
  SELECT count(*)::int AS n FROM gone`;

/** A key held by one running request (`owner`). */
type Lease = { scope: string; key: string; owner: string };
/** A key to claim: the statement's parameters, a column each. */
type ClaimRow = [scope: string, key: string, hash: string, owner: string];

/**
 * Claims a batch of keys, each as in progress leased to its request: a new key, one older than the
 * retention period, or one left without an answer by the same request before (its lease ran out: it
 * died, or it was released: a server error, a refusal that was not final). Another request under
 * such a key is not let in: it is refused as any other body under a key is, since what the first
 * one committed before it died is found by the key and would answer it. Returns the owners that got
 * their key.
 *
 * Its commit does not wait for the WAL flush (`synchronous_commit` off for this statement's own
 * transaction): other requests see the claims at once all the same, and whatever a request then
 * writes is committed after it, synchronously, which flushes its claim too. A database crash can
 * only forget a claim nothing durable came of. The stored answer (`complete`) stays synchronous.
 */
const CLAIM_KEYS = `
  INSERT INTO idempotency_keys (merchant_id, key, request_hash, lease_owner, lease_until)
  SELECT c.scope, c.key, c.hash, c.owner, now() + $5 * interval '1 millisecond'
    FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[]) AS c(scope, key, hash, owner)
   WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL
  ON CONFLICT (merchant_id, key) DO UPDATE
    SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL,
        created_at = now(), lease_owner = EXCLUDED.lease_owner, lease_until = EXCLUDED.lease_until
    WHERE idempotency_keys.created_at < now() - interval '${RETENTION}'
       OR (idempotency_keys.response_status IS NULL
           AND idempotency_keys.request_hash = EXCLUDED.request_hash
           AND (idempotency_keys.lease_until IS NULL OR idempotency_keys.lease_until < now()))
  RETURNING lease_owner::text AS owner`;

/**
 * The rows one claim statement can take: the first request of each key (a statement may not touch
 * a row twice; the others of the key find it taken), in key order, so that two batches sharing
 * keys lock them in the same order and never deadlock.
 */
function claimableOf(rows: readonly ClaimRow[]): ClaimRow[] {
  const firstOfKey = new Map<string, ClaimRow>();
  for (const row of rows) {
    const id = `${row[0]}\u0000${row[1]}`;
    if (!firstOfKey.has(id)) firstOfKey.set(id, row);
  }
  return [...firstOfKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

/** What the guard leaves on a request whose key it claimed, for `answered` to store its answer. */
const CLAIMED = Symbol('byrd.idempotency.claimed');
interface Claimed {
  lease: Lease;
  renewal: NodeJS.Timeout;
  holdsSecrets: boolean;
}
type ClaimingRequest = AuthenticatedRequest & { [CLAIMED]?: Claimed };

/** The claim of a request's idempotency-key, for its use case to store its answer with its work. */
export type KeyClaim = Readonly<Lease>;

/** The claim of the request's idempotency-key, when the guard claimed one for it. */
export function keyClaimOf(request: object): KeyClaim | undefined {
  return (request as ClaimingRequest)[CLAIMED]?.lease;
}

/**
 * Stores the request's answer under its idempotency-key in the use case's own transaction, so the
 * answer commits with the work or not at all: a request killed between its commit and `answered`
 * otherwise left its key unanswered, and the retry ran again once the lease ran out (a delete's
 * found nothing and answered 404). For a route whose answer is known before its commit (a delete's).
 * `answered` then finds the key answered and leaves it so. When the lease was lost (the request
 * stalled past it and a retry took the key over), the work is rolled back (409): the retry does it.
 */
export async function storeAnswerWithWork(
  manager: EntityManager,
  claim: KeyClaim | undefined,
  status: number,
  body: unknown,
): Promise<void> {
  if (!claim) return;
  const [, stored] = await manager.query<[unknown, number]>(
    `UPDATE idempotency_keys
        SET response_status = $4, response_body = $5::jsonb, lease_owner = NULL, lease_until = NULL
      WHERE merchant_id = $1 AND key = $2 AND lease_owner = $3`,
    [claim.scope, claim.key, claim.owner, status, JSON.stringify(body ?? null)],
  );
  if (stored !== 1) throw Refusal.keyInProgress();
}

/** Requests answered with a refusal that is not final (`ApiError.transient`), told by the exception filter. */
const TRANSIENT_ANSWERS = new WeakSet<object>();

/** Marks the request's answer as not final: `answered` frees its idempotency-key instead of keeping it. */
export function markTransientAnswer(request: object): void {
  TRANSIENT_ANSWERS.add(request);
}

/**
 * DESIGN.md "Idempotency": the first answer to a POST (or a DELETE: `IDEMPOTENT_METHODS`) with an
 * `idempotency-key` is stored per merchant with a hash of the request. A repeat with the same body replays it; the same key with
 * another body is refused (422); a repeat while the first still runs gets 409. Server errors are not
 * stored, so the client may retry them. A running request leases its key (IDEMPOTENCY_LEASE_MS,
 * renewed every third of it while it runs): when its process dies, or its clean-up fails, the key is free again once
 * the lease runs out, and only the lease's owner may answer or release it.
 *
 * A global guard (after the API key's, which names the merchant) claims the key or replays its
 * answer, and `answered` (the HTTP server's onSend hook) stores the answer before it leaves. Not an
 * interceptor: Nest runs every request, with a key or not, through an interceptor's observables and
 * async scopes (measured in-process: about 150 µs of CPU per payment).
 */
@Injectable()
export class IdempotencyGuard implements CanActivate, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(IdempotencyGuard.name);
  private purgeTimer?: NodeJS.Timeout;

  private readonly leaseMs: number;
  // Claims and answers of requests running together each share one statement (group commit).
  private readonly claims = new GroupCommit<ClaimRow, boolean>(
    async (rows) => {
      const claimable = claimableOf(rows);
      const claimed = await queryPrepared<{ owner: string }>(this.dataSource, CLAIM_KEYS, [
        ...columnsOf(claimable),
        this.leaseMs,
      ]);
      const owners = new Set(claimed.map((row) => row.owner));
      return rows.map((row) => owners.has(row[3]));
    },
    { maxBatch: 64, maxInFlight: 2 },
  );
  private readonly answers = new GroupCommit<AnswerRow, void>(
    async (rows) => {
      // Planned for each batch: a plan cached while the table was small scans all of it later.
      await queryReplanned(this.dataSource, STORE_ANSWERS, columnsOf(rows));
      return rows.map(() => undefined);
    },
    { maxBatch: 64, maxInFlight: 2 },
  );

  constructor(
    private readonly dataSource: DataSource,
    private readonly reflector: Reflector,
    @Inject(PLATFORM_CONFIG) config: BaseConfig,
  ) {
    this.leaseMs = config.IDEMPOTENCY_LEASE_MS;
  }

  onModuleInit(): void {
    this.purgeTimer = setInterval(() => void this.purgeExpired(), 3_600_000).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.purgeTimer);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<ClaimingRequest>();
    const keyed = this.keyedRequestOf(request);
    if (!keyed) return true;
    const { scope, key, hash } = keyed;
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const holdsSecrets =
      this.reflector.get<boolean | undefined>(ANSWER_HOLDS_SECRETS, context.getHandler()) ?? false;

    const lease = { scope, key, owner: randomUUID() };
    const existing = await this.claim(lease, hash);
    if (existing) return this.replay(existing, hash, reply, holdsSecrets);
    const renewal = setInterval(() => void this.renew(lease), this.leaseMs / 3);
    request[CLAIMED] = { lease, renewal, holdsSecrets };
    return true;
  }

  /**
   * Whether this request repeats one whose answer its key keeps (the same request, answered within
   * the retention): this guard will replay that answer. A read only, for a guard that runs before
   * this one (a rate limit): a repeat of an answered request is not another attempt, and must get
   * its answer, not a 429, once the limit is reached meanwhile.
   */
  async repeatsAnsweredRequest(request: AuthenticatedRequest): Promise<boolean> {
    const keyed = this.keyedRequestOf(request);
    if (!keyed) return false;
    const rows = await queryPrepared<{ answered: boolean }>(
      this.dataSource,
      `SELECT true AS answered FROM idempotency_keys
        WHERE merchant_id = $1 AND key = $2 AND request_hash = $3 AND response_status IS NOT NULL
          AND created_at >= now() - interval '${RETENTION}'`,
      [keyed.scope, keyed.key, keyed.hash],
    );
    return rows.length > 0;
  }

  /**
   * The scope, key and request hash a request's `idempotency-key` is kept under; null when it has
   * none to keep (no key, a method not kept, no merchant nor well-formed checkout key). A malformed
   * key or a body the database cannot store is refused (400).
   */
  private keyedRequestOf(request: AuthenticatedRequest): { scope: string; key: string; hash: string } | null {
    if (!IDEMPOTENT_METHODS.has(request.method)) return null;
    const key = checkedIdempotencyKey(idempotencyKeyOf(request));
    if (key === undefined) return null;
    const checkoutKey = (request.query as Record<string, unknown> | undefined)?.checkoutKey;
    // A browser's key is scoped by its checkout key, but only by a well-formed one: the validation
    // pipe (which runs after guards) refuses any other, and its bytes must not reach the table.
    if (!request.merchant && !(typeof checkoutKey === 'string' && isGuid(checkoutKey))) return null;
    const scope = request.merchant?.merchantId ?? checkoutScopeOf(checkoutKey as string);
    // Keyed by the caller's own secret (API key or checkout key), which the row does not hold: the
    // body may hold a card, and a hash of a card keyed by anything stored beside it could be
    // brute-forced (PCI DSS 3.5: keyed hashes only); its CVV is not hashed at all (`withoutCvv`).
    // As the guard reads the key (trimmed, any case), so a retry writing it otherwise is the same
    // request.
    // The body is hashed before the validation pipe runs: what the pipe would refuse (nesting past
    // MAX_INPUT_DEPTH, which JSON.stringify overflows the stack on from a few thousand levels, text
    // the database cannot store, sizes past the input limits) is refused here with the pipe's own 400.
    const refused = refusedInputFields(request.body);
    if (refused.length) throw invalidFields(refused);
    const callerSecret = String(request.merchant ? request.headers['x-api-key'] : checkoutKey)
      .trim()
      .toLowerCase();
    const hash = createHmac('sha256', callerSecret)
      .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null, withoutCvv)}`)
      .digest('hex');
    return { scope, key, hash };
  }

  /**
   * The answer of a request whose key this guard claimed, as it is about to leave (onSend): a
   * success or a refusal is stored first; a server error, a conflict, a rate limit or a refusal
   * that is not final (`ApiError.transient`: any with `Retry-After`,
   * `Refusal.notAllowedUntilReleased` and `Refusal.limitReached`) frees the key for a retry.
   * An answer that cannot be stored is not sent: the key is freed and the caller gets a 500 to retry
   * (the use case finds what the request made by its key).
   */
  async answered(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
    const claimed = (request as ClaimingRequest)[CLAIMED];
    if (!claimed) return;
    delete (request as ClaimingRequest)[CLAIMED];
    const { lease } = claimed;
    const status = reply.statusCode;
    // The lease is renewed until the answer is stored: a slow store must not let a retry in.
    try {
      // Only a JSON answer, or none (204, a delete's), can be kept and replayed (a page a route
      // sends itself is not).
      const noContent = status === 204;
      const json = String(reply.getHeader('content-type') ?? '').includes('json');
      const tryAgain = status >= 500 || status === 409 || status === 429 || TRANSIENT_ANSWERS.has(request);
      if (tryAgain || !(json || noContent)) return await this.release(lease);
      const body = noContent || (status < 400 && claimed.holdsSecrets) ? 'null' : jsonOf(payload);
      try {
        await this.complete(lease, status, body);
      } catch (error) {
        await this.release(lease);
        throw error;
      }
    } finally {
      clearInterval(claimed.renewal);
    }
  }

  /**
   * Claims the key for this request (see CLAIM_KEYS); returns the earlier answer when the key is
   * already taken.
   */
  private async claim(lease: Lease, hash: string): Promise<StoredAnswer | null> {
    if (await this.claims.submit([lease.scope, lease.key, hash, lease.owner])) return null;
    const rows = await queryPrepared<StoredAnswer>(
      this.dataSource,
      `SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`,
      [lease.scope, lease.key],
    );
    // Gone between the insert and the select (past its retention, purged): let the client retry.
    return rows[0] ?? { request_hash: hash, response_status: null, response_body: null };
  }

  /** Extends the running request's lease; a failure only shortens it (the next renewal tries again). */
  private async renew(lease: Lease): Promise<void> {
    try {
      await this.dataSource.query(
        `UPDATE idempotency_keys SET lease_until = now() + $4 * interval '1 millisecond'
          WHERE merchant_id = $1 AND key = $2 AND lease_owner = $3 AND response_status IS NULL`,
        [lease.scope, lease.key, lease.owner, this.leaseMs],
      );
    } catch (error) {
      this.logger.warn(`Idempotency lease renewal failed: ${String(error)}`);
    }
  }

  /**
   * The stored answer, sent through the exception filter; a success of a route whose answer holds
   * secrets is rebuilt by running the handler again (true: let the request through, unclaimed).
   */
  private replay(existing: StoredAnswer, hash: string, reply: FastifyReply, holdsSecrets: boolean): boolean {
    if (existing.request_hash !== hash) {
      throw Refusal.idempotencyKeyReused('This idempotency-key was already used with a different request');
    }
    if (existing.response_status === null) {
      throw Refusal.keyInProgress();
    }
    void reply.header('idempotent-replayed', 'true');
    if (existing.response_status < 400 && holdsSecrets) return true;
    throw new ReplayedError(existing.response_status, existing.response_body);
  }

  private async complete(lease: Lease, status: number, body: string): Promise<void> {
    await this.answers.submit([lease.scope, lease.key, lease.owner, status, body]);
  }

  /**
   * Frees the key for the same request to try again (its hash stays: another body under it is still
   * refused); if that cannot reach the database, the key is free once its lease runs out.
   */
  private async release(lease: Lease): Promise<void> {
    try {
      await this.dataSource.query(
        `UPDATE idempotency_keys SET lease_owner = NULL, lease_until = NULL
          WHERE merchant_id = $1 AND key = $2 AND lease_owner = $3`,
        [lease.scope, lease.key, lease.owner],
      );
    } catch (cleanUp) {
      this.logger.warn(`Idempotency key not released (free again within its lease): ${String(cleanUp)}`);
    }
  }

  /**
   * Removes the keys past their retention, every one of them, in short statements (by the
   * `created_at` index): one statement over a backlog past the statement timeout deleted nothing,
   * and the next run had more. A key a claim is taking over is skipped (its row is new again).
   * Returns how many.
   */
  async purgeExpired(): Promise<number> {
    let removed = 0;
    try {
      for (;;) {
        const [{ n }] = await this.dataSource.query<{ n: number }[]>(PURGE_EXPIRED_BATCH, [PURGE_BATCH]);
        removed += n;
        if (n < PURGE_BATCH) return removed;
      }
    } catch (error) {
      this.logger.warn(`Idempotency purge failed: ${String(error)}`);
      return removed;
    }
  }
}

/** An answer's serialized body as JSON text for the jsonb column (JSON null when it is not JSON text). */
function jsonOf(payload: unknown): string {
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return 'null';
}

/** A card verification code's field, in any case: `cvv`, `Cvv`, `CVC`, `cvv2`. */
const CVV_FIELD = /^cv[cv]2?$/i;

/**
 * Leaves card verification codes out of a request's hash: nothing derived from one is stored
 * (PCI DSS 3.3.1: no sensitive authentication data after authorisation, in any form), and a
 * retry that differs only by it is the same request.
 */
function withoutCvv(field: string, value: unknown): unknown {
  return CVV_FIELD.test(field) ? undefined : value;
}
