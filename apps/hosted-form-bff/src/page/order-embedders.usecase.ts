import { Inject, Injectable } from '@nestjs/common';
import { guidOf, RpcSubjects } from '@byrd/contracts';
import { allowedCheckoutOrigins, ApiError, isCheckoutOrigin, MerchantDirectory, Rpc } from '@byrd/platform';
import { CHECKOUT_CONFIG, type CheckoutConfig } from '../config.js';

/**
 * Who may frame one order's form (CSP `frame-ancestors` of `/checkout/o/{orderId}/`): the page
 * itself, the order's redirectUrl origin and its merchant's checkout origins, once the merchant has
 * listed any. A merchant without a list keeps the operator's CHECKOUT_FRAME_ANCESTORS. Only origins
 * whose host is a host name or IP address reach the header (`isCheckoutOrigin`; any scheme: the mode
 * was checked when the list was stored).
 */
@Injectable()
export class OrderEmbedders {
  constructor(
    private readonly rpc: Rpc,
    private readonly merchants: MerchantDirectory,
    @Inject(CHECKOUT_CONFIG) private readonly config: CheckoutConfig,
  ) {}

  /** The `frame-ancestors` sources; an unknown order gets `'none'` (its page only shows an error). */
  async frameAncestors(named: string): Promise<string> {
    const orderId = guidOf(named); // as GuidParam reads ids
    if (orderId === null) return "'none'";
    const order = await this.rpc.call(RpcSubjects.OrdersEmbedding, { orderId }).catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 'BYRD901') return null;
      throw error;
    });
    if (!order) return "'none'";
    // Whether the merchant has a list is its stored list's say (one of refused entries only frames
    // as 'self' and the redirect origin, not as the operator's default); what reaches the header is
    // checked, the order's redirect origin too (its URL's origin may hold what no host name does).
    const merchant = await this.merchants.get(order.merchantId);
    if (!merchant?.checkoutOrigins?.length) return this.config.CHECKOUT_FRAME_ANCESTORS;
    const sources = allowedCheckoutOrigins(order.redirectUrl, merchant.checkoutOrigins);
    return ["'self'", ...sources.filter((origin) => isCheckoutOrigin(origin, 'sandbox'))].join(' ');
  }
}
