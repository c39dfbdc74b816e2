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

  /** `orderId` is a GUID (GuidParam). Another merchant's order answers exactly like a missing one. */
  async execute(merchantId: string, orderId: string) {
    const order = await this.dataSource.getRepository(Order).findOneBy({ id: orderId, merchantId });
    if (!order) throw ApiError.notFound(`Order ${orderId}`);
    const transactions = await this.dataSource
      .getRepository(OrderTransaction)
      .find({ where: { orderId: order.id }, order: { createdAt: 'ASC' } });
    return presentOrderDetails(order, transactions, this.config.CHECKOUT_URL);
  }
}
