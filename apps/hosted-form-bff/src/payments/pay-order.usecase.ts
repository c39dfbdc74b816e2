import { Injectable } from '@nestjs/common';
import {
  RpcSubjects,
  type CheckoutPaymentRequest,
  type CheckoutPaymentRpcRequest,
  type CheckoutPaymentView,
} from '@byrd/contracts';
import { ApiError, checkedIdempotencyKey, notFoundAs, Rpc } from '@byrd/platform';
import { orderNotFound, type CheckoutAccess } from '../common/checkout-access.js';
import { GetCheckoutOrderView } from '../orders/get-checkout-order-view.usecase.js';
import { toCheckoutPaymentView } from './checkout-payment-view.js';

/** Card authorisations with 3DS can take longer than a plain read. */
const PAYMENT_RPC_TIMEOUT_MS = 30_000;

/**
 * `POST /checkout/api/v2/orders/{orderId}/payments`: the shopper pays the order with one of the
 * methods the form offers for it. The card travels to payments only, signed and encrypted. The
 * page's `idempotency-key` (one per attempt) goes with it: payments answers an attempt sent again
 * with the payment it made.
 */
@Injectable()
export class PayCheckoutOrder {
  constructor(
    private readonly rpc: Rpc,
    private readonly orders: GetCheckoutOrderView,
  ) {}

  async execute(
    access: CheckoutAccess,
    body: CheckoutPaymentRequest,
    requestId: string,
    idempotencyKey?: string,
  ): Promise<CheckoutPaymentView> {
    // The platform's rules for the header, checked before anything is asked of anyone.
    const key = checkedIdempotencyKey(idempotencyKey);
    // Whether the order may still be paid is payments' decision (it asks orders): only the form's
    // own choices (its methods, its save-card offer) are checked here.
    const order = await this.orders.execute(access);
    if (!(order.paymentMethods as string[]).includes(body.type)) {
      throw ApiError.invalidField(
        'type',
        `must be one of this order's payment methods: ${order.paymentMethods.join(', ')}`,
      );
    }
    const payment: CheckoutPaymentRpcRequest['payment'] = { type: body.type };
    if (body.type === 'card') {
      if (!body.card) throw ApiError.invalidField('card', 'is required for a card payment');
      const { number, expiration, cvv, holder } = body.card;
      payment.card = { number, expiration, cvv, ...(holder ? { holder } : {}) };
    } else if (body.type === 'mbway') {
      if (!body.mbway) throw ApiError.invalidField('mbway.phoneNumber', 'is required for an MB WAY payment');
      payment.mbway = { phoneNumber: body.mbway.phoneNumber };
    }
    if (body.saveCard) {
      if (body.type !== 'card') throw ApiError.invalidField('saveCard', 'applies to card payments only');
      if (!order.saveCardOffered) {
        throw ApiError.invalidField('saveCard', 'this order does not offer to save the card');
      }
    }
    const created = await this.rpc
      .call(
        RpcSubjects.PaymentsCreate,
        {
          ...access,
          payment,
          saveCard: body.saveCard === true,
          requestId,
          ...(key !== undefined ? { idempotencyKey: key } : {}),
        },
        PAYMENT_RPC_TIMEOUT_MS,
      )
      .catch(notFoundAs(orderNotFound));
    return toCheckoutPaymentView(created);
  }
}
