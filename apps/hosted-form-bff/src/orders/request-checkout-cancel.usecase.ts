import { Injectable } from '@nestjs/common';
import { RpcSubjects, type CheckoutCancelResult } from '@byrd/contracts';
import { notFoundAs, Rpc } from '@byrd/platform';
import { orderNotFound, type CheckoutAccess } from '../common/checkout-access.js';

/**
 * `POST /checkout/api/v2/orders/{orderId}/cancel`: the shopper's cancel button. Orders decides and
 * the answer is its own: an open order is canceled (one whose time ran out, expired), an already
 * canceled one answers as canceled, any other (or one a payment holds) is refused with BYRD205, 422.
 */
@Injectable()
export class RequestCheckoutCancel {
  constructor(private readonly rpc: Rpc) {}

  async execute(access: CheckoutAccess): Promise<CheckoutCancelResult> {
    const result = await this.rpc
      .call(RpcSubjects.OrdersCancel, { orderId: access.orderId, checkoutKey: access.checkoutKey })
      .catch(notFoundAs(orderNotFound));
    return { orderId: result.orderId, status: result.status };
  }
}
