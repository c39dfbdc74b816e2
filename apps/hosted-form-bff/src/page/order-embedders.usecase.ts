import { Inject, Injectable } from '@nestjs/common';
import { isGuid, RpcSubjects } from '@byrd/contracts';
import { allowedCheckoutOrigins, ApiError, MerchantDirectory, Rpc } from '@byrd/platform';
import { CHECKOUT_CONFIG, type CheckoutConfig } from '../config.js';

/**
 * Who may frame one order's form (CSP `frame-ancestors` of `/checkout/o/{orderId}/`): the page
 * itself, the order's redirectUrl origin and its merchant's checkout origins, once the merchant has
 * listed any. A merchant without a list keeps the operator's CHECKOUT_FRAME_ANCESTORS. Only origins
 * whose host is a host name or IP address reach the header (`MerchantDirectory.checkoutOrigins`).
 */
@Injectable()
export class OrderEmbedders {
  constructor(
    private readonly rpc: Rpc,
    private readonly merchants: MerchantDirectory,
    @Inject(CHECKOUT_CONFIG) private readonly config: CheckoutConfig,
  ) {}

  /** The `frame-ancestors` sources; an unknown order gets `'none'` (its page only shows an error). */
  async frameAncestors(orderId: string): Promise<string> {
    if (!isGuid(orderId)) return "'none'";
    const order = await this.rpc.call(RpcSubjects.OrdersEmbedding, { orderId }).catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 'BYRD901') return null;
      throw error;
    });
    if (!order) return "'none'";
    const listed = await this.merchants.checkoutOrigins(order.merchantId);
    if (listed.length === 0) return this.config.CHECKOUT_FRAME_ANCESTORS;
    return ["'self'", ...allowedCheckoutOrigins(order.redirectUrl, listed)].join(' ');
  }
}
