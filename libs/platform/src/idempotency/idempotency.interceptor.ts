import { createHmac } from 'node:crypto';
import {
  HttpStatus,
  Injectable,
  Logger,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants.js';
import type { FastifyReply } from 'fastify';
import { catchError, from, mergeMap, of, throwError, type Observable } from 'rxjs';
import { DataSource } from 'typeorm';
import { ApiError, ErrorKind } from '../errors/api-error.js';
import { toErrorResponse, type ErrorBody } from '../errors/error-body.js';
import type { AuthenticatedRequest } from '../auth/api-key.guard.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const MAX_KEY_LENGTH = 255;
const RETENTION = '24 hours';

/** A stored error answer, replayed through the exception filter with its original status. */
export class ReplayedError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message);
  }
}

type StoredAnswer = { request_hash: string; response_status: number | null; response_body: unknown };

/**
 * DESIGN.md "Idempotency": the first answer to a POST with an `idempotency-key` is stored per
 * merchant with a hash of the request. A repeat with the same body replays it; the same key with
 * another body is refused (422); a repeat while the first still runs gets 409. Server errors are not
 * stored, so the client may retry them.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(IdempotencyInterceptor.name);
  private purgeTimer?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    this.purgeTimer = setInterval(() => void this.purgeExpired(), 3_600_000).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.purgeTimer);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = request.headers[IDEMPOTENCY_HEADER];
    const key = Array.isArray(header) ? header[0] : header;
    if (request.method !== 'POST' || key === undefined) return next.handle();
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw ApiError.invalidField(IDEMPOTENCY_HEADER, `must be 1 to ${MAX_KEY_LENGTH} characters`);
    }
    const scope =
      request.merchant?.merchantId ??
      `checkout:${String(request.query && (request.query as Record<string, unknown>).checkoutKey)}`;
    // Keyed by the caller's own secret (API key or checkout key): the body may hold a card, and a
    // plain hash of a card and its CVV could be brute-forced (PCI DSS 3.5: keyed hashes only).
    const callerSecret = String(request.headers['x-api-key'] ?? scope);
    const hash = createHmac('sha256', callerSecret)
      .update(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`)
      .digest('hex');
    const successStatus =
      this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler()) ?? HttpStatus.CREATED;
    const reply = context.switchToHttp().getResponse<FastifyReply>();

    return from(this.claim(scope, key, hash)).pipe(
      mergeMap((existing) => {
        if (existing) return this.replay(existing, hash, reply);
        return next.handle().pipe(
          mergeMap((body) =>
            from(this.complete(scope, key, successStatus, body)).pipe(mergeMap(() => of(body))),
          ),
          catchError((error: unknown) =>
            from(this.fail(scope, key, error, String(request.id))).pipe(
              mergeMap(() => throwError(() => error)),
            ),
          ),
        );
      }),
    );
  }

  /** Inserts the key as in progress; returns the earlier answer when the key is already taken. */
  private async claim(scope: string, key: string, hash: string): Promise<StoredAnswer | null> {
    // One statement claims a new key, or takes over one older than the retention period.
    const inserted: unknown[] = await this.dataSource.query(
      `INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ($1, $2, $3)
       ON CONFLICT (merchant_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, response_status = NULL, response_body = NULL, created_at = now()
         WHERE idempotency_keys.created_at < now() - interval '${RETENTION}'
       RETURNING key`,
      [scope, key, hash],
    );
    if (inserted.length > 0) return null;
    const rows: StoredAnswer[] = await this.dataSource.query(
      `SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`,
      [scope, key],
    );
    // Gone between the insert and the select (the first request failed): let the client retry.
    return rows[0] ?? { request_hash: hash, response_status: null, response_body: null };
  }

  private replay(existing: StoredAnswer, hash: string, reply: FastifyReply): Observable<unknown> {
    if (existing.request_hash !== hash) {
      throw new ApiError(
        ErrorKind.BusinessRule,
        'This idempotency-key was already used with a different request',
        {
          code: 'BYRD900',
        },
      );
    }
    if (existing.response_status === null) {
      throw new ApiError(ErrorKind.Conflict, 'A request with this idempotency-key is still being processed');
    }
    void reply.header('idempotent-replayed', 'true');
    if (existing.response_status >= 400) {
      throw new ReplayedError(existing.response_status, existing.response_body as ErrorBody);
    }
    return of(existing.response_body);
  }

  private async complete(scope: string, key: string, status: number, body: unknown): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_keys SET response_status = $3, response_body = $4 WHERE merchant_id = $1 AND key = $2`,
      [scope, key, status, JSON.stringify(body ?? null)],
    );
  }

  private async fail(scope: string, key: string, error: unknown, requestId: string): Promise<void> {
    const answer = toErrorResponse(error, requestId);
    if (answer.status >= 500 || answer.status === 409 || answer.status === 429) {
      await this.dataSource.query(`DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`, [
        scope,
        key,
      ]);
    } else {
      await this.complete(scope, key, answer.status, answer.body);
    }
  }

  private async purgeExpired(): Promise<void> {
    try {
      await this.dataSource.query(
        `DELETE FROM idempotency_keys WHERE created_at < now() - interval '${RETENTION}'`,
      );
    } catch (error) {
      this.logger.warn(`Idempotency purge failed: ${String(error)}`);
    }
  }
}
