import { Inject, Injectable, Logger } from '@nestjs/common';
import { isGuid, RpcSubjects } from '@byrd/contracts';
import { allowedCheckoutOrigins, ApiError, checkoutOriginOf, MerchantDirectory, Rpc } from '@byrd/platform';
import { CHECKOUT_CONFIG, type CheckoutConfig } from '../config.js';

/**
 * Who may frame one order's form (CSP `frame-ancestors` of `/checkout/o/{orderId}/`): the page
 * itself, the order's redirectUrl origin and its merchant's checkout origins, once the merchant has
 * listed any. A merchant without a list keeps the operator's CHECKOUT_FRAME_ANCESTORS. A stored
 * origin that {@link checkoutOriginOf} no longer accepts (listed before its host was checked:
 * `https://*`, `https://a.com;sandbox`) is left out and logged, never written into the header.
 */
@Injectable()
export class OrderEmbedders {
  private readonly logger = new Logger(OrderEmbedders.name);

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
    const sources = allowedCheckoutOrigins(order.redirectUrl, listed).filter((origin) => {
      // The scheme was checked for the merchant's mode when stored; here only what the header may hold.
      const checked = checkoutOriginOf(origin, 'sandbox');
      if ('origin' in checked && checked.origin === origin) return true;
      this.logger.warn(
        `Merchant ${order.merchantId}: checkout origin ${JSON.stringify(origin)} left out of frame-ancestors: ${
          'problem' in checked ? checked.problem : `not normalised (${checked.origin})`
        }`,
      );
      return false;
    });
    return ["'self'", ...sources].join(' ');
  }
}
