import { Inject, Injectable } from '@nestjs/common';
import { RpcSubjects, type CheckoutOrderView, type OrderSummary } from '@byrd/contracts';
import { MerchantDirectory, notFoundAs, Rpc } from '@byrd/platform';
import { orderNotFound, type CheckoutAccess } from '../common/checkout-access.js';
import { CHECKOUT_CONFIG, type CheckoutConfig } from '../config.js';
import { toCheckoutOrderView } from './checkout-order-view.js';

/** `GET /checkout/api/v2/orders/{orderId}`: the order as the page renders it. */
@Injectable()
export class GetCheckoutOrderView {
  constructor(
    private readonly rpc: Rpc,
    private readonly merchants: MerchantDirectory,
    @Inject(CHECKOUT_CONFIG) private readonly config: CheckoutConfig,
  ) {}

  async execute(access: CheckoutAccess): Promise<CheckoutOrderView> {
    const order = await this.summary(access);
    const origins = await this.merchants.checkoutOrigins(order.merchantId);
    return toCheckoutOrderView(order, this.config.THREE_DS_SDK_URL, origins);
  }

  /** The order as orders reports it to the holder of its checkout key. */
  summary(access: CheckoutAccess): Promise<OrderSummary> {
    return (
      this.rpc
        .call(RpcSubjects.OrdersGet, { orderId: access.orderId, checkoutKey: access.checkoutKey })
        // Orders' "not found" names the order id; the shopper gets the sentence that names neither.
        .catch(notFoundAs(orderNotFound))
    );
  }
}
