import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  reconcileAmounts,
  type CreatePaymentRequest,
  type InitiatedFrom,
  type MerchantMode,
  type OrderSummary,
  type PaymentType,
} from '@byrd/contracts';
import { ApiError, ErrorKind, Rpc, type MerchantContext } from '@byrd/platform';

/** Who is paying: a merchant's backend (API key) or a browser holding an order's checkout key. */
export type PaymentActor = { merchant: MerchantContext } | { checkoutKey: string };

/** Whose payment this is, and the order it pays (if any). */
export interface Payer {
  merchantId: string;
  mode: MerchantMode;
  order: OrderSummary | null;
  initiatedFrom: InitiatedFrom;
}

const PAYABLE_ORDER_STATUSES = ['created', 'pending'];

/**
 * Resolves the merchant and order of a payment, the same way for every payment method: a checkout
 * key proves access to one order (the hosted form), an API key may name any order of its merchant.
 */
@Injectable()
export class PayerResolver {
  constructor(
    private readonly rpc: Rpc,
    private readonly dataSource: DataSource,
  ) {}

  async resolve(actor: PaymentActor, request: Pick<CreatePaymentRequest, 'orderId'>): Promise<Payer> {
    let order: OrderSummary | null = null;
    let initiatedFrom: InitiatedFrom = 'Server';
    if ('checkoutKey' in actor) {
      if (!request.orderId)
        throw ApiError.invalidField('orderId', 'is required when paying with a checkoutKey');
      order = await this.rpc.call('rpc.orders.get', {
        orderId: request.orderId,
        checkoutKey: actor.checkoutKey,
      });
      initiatedFrom = 'HostedForm';
    } else if (request.orderId) {
      order = await this.rpc.call('rpc.orders.get', {
        orderId: request.orderId,
        merchantId: actor.merchant.merchantId,
      });
    }
    if (order && !PAYABLE_ORDER_STATUSES.includes(order.status)) {
      throw new ApiError(
        ErrorKind.BusinessRule,
        `Order ${order.orderId} is ${order.status} and cannot be paid`,
        {
          code: 'BYRD205',
        },
      );
    }
    // An order stays `pending` while its pre-authorisation awaits capture: not open to a second charge.
    if (order && (await this.holdsMoney(order))) {
      throw new ApiError(
        ErrorKind.BusinessRule,
        `Order ${order.orderId} already has a successful payment and cannot be paid again`,
        { code: 'BYRD205' },
      );
    }
    const merchantId = 'merchant' in actor ? actor.merchant.merchantId : order!.merchantId;
    const mode = 'merchant' in actor ? actor.merchant.mode : (order!.merchantMode ?? 'sandbox');
    return { merchantId, mode, order, initiatedFrom };
  }

  /** Whether a payment of the order succeeded, or a pre-authorisation of it is still (partly) held. */
  private async holdsMoney(order: OrderSummary): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM transactions
        WHERE merchant_id = $1 AND order_id = $2 AND status = 'Success'
          AND (operation_type = 'Payment' OR (operation_type = 'PreAuth' AND released_iso_amount < iso_amount))
        LIMIT 1`,
      [order.merchantId, order.orderId],
    );
    return rows.length > 0;
  }
}

/** An order may restrict the methods its shopper is offered (`allowedPaymentMethods`; empty means all). */
export function assertOrderAccepts(order: OrderSummary | null, method: PaymentType): void {
  const allowed = order?.allowedPaymentMethods ?? [];
  if (allowed.length > 0 && !allowed.includes(method)) {
    throw new ApiError(
      ErrorKind.BusinessRule,
      `Order ${order!.orderId} does not accept ${method}; it accepts ${allowed.join(', ')}`,
      { code: 'BYRD292' },
    );
  }
}

/** The amount to charge, in minor units: as sent, and exactly the order's when paying one. */
export function amountToPay(
  request: Pick<CreatePaymentRequest, 'amount' | 'isoAmount' | 'currency'>,
  order: OrderSummary | null,
): number {
  const amount = reconcileAmounts(request, request.currency);
  if (!amount.ok)
    throw ApiError.invalidField(request.amount != null ? 'amount' : 'isoAmount', amount.message);
  if (amount.isoAmount <= 0) throw ApiError.invalidField('amount', 'must be greater than zero');
  if (order && (order.currency !== request.currency || order.isoAmount !== amount.isoAmount)) {
    throw ApiError.invalidField('amount', `must be the order's amount, ${order.amount} ${order.currency}`);
  }
  return amount.isoAmount;
}
