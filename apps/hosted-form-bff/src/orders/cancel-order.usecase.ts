import { Injectable } from '@nestjs/common';
import { RpcSubjects, type CheckoutCancelResult } from '@byrd/contracts';
import { notFoundAs, Refusal, Rpc } from '@byrd/platform';
import { orderNotFound, type CheckoutAccess } from '../common/checkout-access.js';
import { OPEN_ORDER_STATUSES } from './checkout-order-view.js';
import { GetCheckoutOrder } from './get-checkout-order.usecase.js';

/**
 * `POST /checkout/api/v2/orders/{orderId}/cancel`: the shopper's cancel button. Only an open order
 * can be canceled; orders also refuses one that holds an authorised payment (BYRD205, 422).
 */
@Injectable()
export class CancelCheckoutOrder {
  constructor(
    private readonly rpc: Rpc,
    private readonly orders: GetCheckoutOrder,
  ) {}

  async execute(access: CheckoutAccess): Promise<CheckoutCancelResult> {
    const order = await this.orders.summary(access);
    if (!OPEN_ORDER_STATUSES.includes(order.status)) {
      throw Refusal.notAllowed(`This order is ${order.status} and cannot be canceled`);
    }
    const result = await this.rpc
      .call(RpcSubjects.OrdersCancel, { orderId: access.orderId, checkoutKey: access.checkoutKey })
      .catch(notFoundAs(orderNotFound));
    return { orderId: result.orderId, status: result.status };
  }
}
