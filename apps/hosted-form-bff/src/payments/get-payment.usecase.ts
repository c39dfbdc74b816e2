import { Injectable } from '@nestjs/common';
import { RpcSubjects, type CheckoutPaymentView } from '@byrd/contracts';
import { ApiError, ErrorKind, notFoundAs, Rpc } from '@byrd/platform';
import type { CheckoutAccess } from '../common/checkout-access.js';
import { toCheckoutPaymentView } from './checkout-payment-view.js';

/** The answer to a payment that is not one of this order's (or a wrong order/key pair). */
export function paymentNotFound(): ApiError {
  return new ApiError(ErrorKind.NotFound, 'No payment of this order matches this transaction id');
}

/**
 * `GET /checkout/api/v2/orders/{orderId}/payments/{transactionId}`: a payment of the order, as the
 * MB WAY waiting page follows it and the landing page validates it.
 */
@Injectable()
export class GetCheckoutPayment {
  constructor(private readonly rpc: Rpc) {}

  async execute(access: CheckoutAccess, transactionId: string): Promise<CheckoutPaymentView> {
    const payment = await this.rpc
      .call(RpcSubjects.PaymentsGet, { ...access, transactionId })
      .catch(notFoundAs(paymentNotFound));
    return toCheckoutPaymentView(payment);
  }
}
