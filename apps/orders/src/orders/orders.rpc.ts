import { Injectable, type OnModuleInit } from '@nestjs/common';
import { RpcSubjects } from '@byrd/contracts';
import { Rpc } from '@byrd/platform';
import { CancelCheckoutOrder, GetCheckoutOrder, GetOrderEmbedding } from './checkout.usecases.js';
import { LockOrderForPayment, UnlockOrderPayment } from './payment-lock.usecases.js';

/** NATS request/reply handlers for the hosted form backend and payments. */
@Injectable()
export class OrdersRpcHandlers implements OnModuleInit {
  constructor(
    private readonly rpc: Rpc,
    private readonly getCheckoutOrder: GetCheckoutOrder,
    private readonly cancelCheckoutOrder: CancelCheckoutOrder,
    private readonly getOrderEmbedding: GetOrderEmbedding,
    private readonly lockOrderForPayment: LockOrderForPayment,
    private readonly unlockOrderPayment: UnlockOrderPayment,
  ) {}

  onModuleInit(): void {
    this.rpc.serve(RpcSubjects.OrdersGet, (request) => this.getCheckoutOrder.execute(request));
    this.rpc.serve(RpcSubjects.OrdersGetForMerchant, (request) => this.getCheckoutOrder.forMerchant(request));
    this.rpc.serve(RpcSubjects.OrdersCancel, (request) => this.cancelCheckoutOrder.execute(request));
    this.rpc.serve(RpcSubjects.OrdersEmbedding, (request) => this.getOrderEmbedding.execute(request));
    this.rpc.serve(RpcSubjects.OrdersLockPayment, (request) => this.lockOrderForPayment.execute(request));
    this.rpc.serve(RpcSubjects.OrdersUnlockPayment, (request) => this.unlockOrderPayment.execute(request));
  }
}
