import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import { isGuid, type CheckoutPaymentLookup, type CheckoutPaymentView } from '@byrd/contracts';
import { ApiError, notFoundAs, Rpc } from '@byrd/platform';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import { ofMerchant, Transaction } from '../transactions/transaction.entity.js';
import { presentCheckoutPayment } from './checkout-payment.presenter.js';

/**
 * `rpc.payments.get`: a payment of the order, for the holder of its checkout key (the page polls an
 * MB WAY payment, re-reads a card payment after 3DS, validates its landing page). A wrong key, an
 * unknown payment and another order's payment all answer the same BYRD901, revealing nothing.
 */
@Injectable()
export class GetPaymentWithCheckoutKey {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rpc: Rpc,
  ) {}

  async execute(lookup: CheckoutPaymentLookup): Promise<CheckoutPaymentView> {
    const { orderId, checkoutKey, transactionId } = lookup ?? {};
    const notFound = () => ApiError.notFound(`Payment ${String(transactionId)} of order ${String(orderId)}`);
    if (!isGuid(orderId) || !isGuid(checkoutKey) || !isGuid(transactionId)) throw notFound();
    const order = await this.rpc.call('rpc.orders.get', { orderId, checkoutKey }).catch(notFoundAs(notFound));
    // Payments and pre-auths of this order only: never a card verification, nor a refund or capture.
    const transaction = await this.dataSource.getRepository(Transaction).findOneBy({
      ...ofMerchant(order.merchantId, { id: transactionId, orderId: order.orderId }),
      operationType: In(['Payment', 'PreAuth']),
    });
    if (!transaction) throw notFound();
    const session = await this.dataSource.getRepository(ThreeDSSession).findOneBy({ transactionId });
    return presentCheckoutPayment(transaction, session);
  }
}
