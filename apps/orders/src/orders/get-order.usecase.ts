import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApiError } from '@byrd/platform';
import { ORDERS_CONFIG, type OrdersConfig } from '../config.js';
import { Order, OrderTransaction } from './order.entity.js';
import { presentOrderDetails } from './order.presenter.js';

@Injectable()
export class GetOrder {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(ORDERS_CONFIG) private readonly config: OrdersConfig,
  ) {}

  /**
   * `orderId` is a GUID (GuidParam). Another merchant's order answers exactly like a missing one.
   * The order and its transactions are read in one snapshot: a transaction event commits both, and
   * two separate reads could show its new transaction status beside the order's old status.
   */
  async execute(merchantId: string, orderId: string) {
    const { order, transactions } = await this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const order = await manager.findOneBy(Order, { id: orderId, merchantId });
      if (!order) throw ApiError.notFound(`Order ${orderId}`);
      const transactions = await manager.find(OrderTransaction, {
        where: { orderId: order.id },
        order: { createdAt: 'ASC' },
      });
      return { order, transactions };
    });
    return presentOrderDetails(order, transactions, this.config.CHECKOUT_URL);
  }
}
