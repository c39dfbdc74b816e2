import { Module } from '@nestjs/common';
import { OrdersController } from './orders.controller.js';
import { CreateOrder } from './create-order.usecase.js';
import { GetOrder } from './get-order.usecase.js';
import { ApplyTransactionEvent } from './apply-transaction-event.usecase.js';
import { TransactionEventsConsumer } from './transaction-events.consumer.js';
import { ExpireOrders } from './expire-orders.usecase.js';
import { CancelCheckoutOrder, GetCheckoutOrder, GetOrderEmbedding } from './checkout.usecases.js';
import { OrdersRpcHandlers } from './orders.rpc.js';
import { LockOrderForPayment, UnlockOrderPayment } from './payment-lock.usecases.js';
import { OrderEventRecorder } from './order-events.js';

@Module({
  controllers: [OrdersController],
  providers: [
    OrderEventRecorder,
    CreateOrder,
    GetOrder,
    ApplyTransactionEvent,
    TransactionEventsConsumer,
    ExpireOrders,
    GetCheckoutOrder,
    CancelCheckoutOrder,
    GetOrderEmbedding,
    LockOrderForPayment,
    UnlockOrderPayment,
    OrdersRpcHandlers,
  ],
})
export class OrdersModule {}
