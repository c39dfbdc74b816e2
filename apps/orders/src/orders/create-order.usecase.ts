import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import {
  DEFAULT_ORDER_EXPIRES_IN_MS,
  OrderEvents,
  parseExpiresIn,
  type CreateOrderRequest,
} from '@byrd/contracts';
import {
  ApiError,
  createdWithinKeyRetention,
  lockKeyInTransaction,
  reconciledIsoAmount,
  Refusal,
  type MerchantContext,
} from '@byrd/platform';
import { ORDERS_CONFIG, type OrdersConfig } from '../config.js';
import { Order } from './order.entity.js';
import { OrderEventRecorder } from './order-events.js';
import { presentOrder } from './order.presenter.js';

const MINUTE_MS = 60_000;

@Injectable()
export class CreateOrder {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: OrderEventRecorder,
    @Inject(ORDERS_CONFIG) private readonly config: OrdersConfig,
  ) {}

  async execute(merchant: MerchantContext, request: CreateOrderRequest, idempotencyKey?: string) {
    const isoAmount = reconciledIsoAmount(request, request.currency);
    if (isoAmount <= 0) throw ApiError.invalidField('amount', 'must be greater than zero');
    const expiresInMs = this.expiresInMs(expiryOf(request));
    const now = new Date();
    const order = this.dataSource.getRepository(Order).create({
      id: randomUUID(),
      merchantId: merchant.merchantId,
      merchantName: merchant.merchantName,
      merchantMode: merchant.mode,
      checkoutKey: randomUUID(),
      orderRef: request.orderRef ?? null,
      isoAmount,
      currency: request.currency,
      status: 'created',
      shopper: toJson(request.shopper),
      orderOptions: toJson(request.orderOptions),
      paymentOptions: toJson(request.paymentOptions),
      metadata: request.metadata ?? null,
      expiresAt: new Date(now.getTime() + expiresInMs),
      paymentId: null,
      lastTransactionId: null,
      refundedIsoAmount: 0,
      canceledAt: null,
      expiredAt: null,
      idempotencyKey: idempotencyKey ?? null,
      requestHash: idempotencyKey ? requestHashOf(request) : null,
      createdAt: now,
      updatedAt: now,
    });
    const answered = await this.dataSource.transaction(async (manager) => {
      if (idempotencyKey) {
        await lockKeyInTransaction(manager, 'orders', merchant.merchantId, idempotencyKey);
        const earlier = await this.orderOfKey(
          manager,
          merchant.merchantId,
          idempotencyKey,
          request,
          isoAmount,
        );
        if (earlier) return earlier;
      }
      await manager.insert(Order, order as QueryDeepPartialEntity<Order>);
      await this.events.record(manager, order, OrderEvents.Created);
      return order;
    });
    if (answered === order) this.events.flush();
    return presentOrder(answered, this.config.CHECKOUT_URL);
  }

  /**
   * The order an earlier request with this idempotency-key created, within the key's retention. That
   * request committed it but died (or failed) before its answer was stored, so the key's lease ran
   * out and this retry runs: it answers that order instead of making a second. The same key with
   * another request (any field: a longer expiry, another redirect, a pre-authorisation) is refused,
   * as the key's stored answer would be.
   */
  private async orderOfKey(
    manager: EntityManager,
    merchantId: string,
    idempotencyKey: string,
    request: CreateOrderRequest,
    isoAmount: number,
  ): Promise<Order | null> {
    const earlier = await manager.getRepository(Order).findOne({
      where: {
        merchantId,
        idempotencyKey,
        createdAt: createdWithinKeyRetention(),
      },
      order: { createdAt: 'DESC' },
    });
    if (!earlier) return null;
    const same =
      earlier.requestHash !== null
        ? earlier.requestHash === requestHashOf(request)
        : earlier.isoAmount === isoAmount &&
          earlier.currency === request.currency &&
          earlier.orderRef === (request.orderRef ?? null);
    if (!same) {
      throw Refusal.idempotencyKeyReused(
        `This idempotency-key was already used for order ${earlier.id} with another request`,
      );
    }
    return earlier;
  }

  /** `expiresIn` counts minutes; ORDER_EXPIRY_UNIT_MS says how long a minute really is (tests shrink it). */
  private expiresInMs(expiresIn: CreateOrderRequest['expiresIn']): number {
    const ms =
      expiresIn === undefined || expiresIn === null ? DEFAULT_ORDER_EXPIRES_IN_MS : parseExpiresIn(expiresIn);
    return Math.max(1, Math.round((ms / MINUTE_MS) * this.config.ORDER_EXPIRY_UNIT_MS));
  }
}

/**
 * The order's expiry: top-level `expiresIn`, or `orderOptions.expiresIn` (where Paybyrd's AI
 * toolkit puts it); when both are sent they must say the same.
 */
function expiryOf(request: CreateOrderRequest): CreateOrderRequest['expiresIn'] {
  const top = request.expiresIn ?? undefined;
  const inOptions = request.orderOptions?.expiresIn ?? undefined;
  if (top !== undefined && inOptions !== undefined && parseExpiresIn(top) !== parseExpiresIn(inOptions))
    throw ApiError.invalidField('orderOptions.expiresIn', 'must agree with expiresIn when both are sent');
  return top ?? inOptions;
}

/** Stores nested request objects as plain JSON (class instances carry no extra state). */
function toJson(value: object | undefined | null): Record<string, unknown> | null {
  return value ? (JSON.parse(JSON.stringify(value)) as Record<string, unknown>) : null;
}

/** A hash of the request as validated, its keys sorted: the same body gives the same hash. */
function requestHashOf(request: CreateOrderRequest): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
          )
        : value;
  return createHash('sha256')
    .update(JSON.stringify(sorted(request)))
    .digest('hex');
}
