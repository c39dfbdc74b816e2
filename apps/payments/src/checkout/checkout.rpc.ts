import { Injectable, type OnModuleInit } from '@nestjs/common';
import { RpcSubjects } from '@byrd/contracts';
import { Rpc } from '@byrd/platform';
import { GetPaymentWithCheckoutKey } from './get-payment-with-checkout-key.usecase.js';
import { PayOrderWithCheckoutKey } from './pay-order-with-checkout-key.usecase.js';

/**
 * The hosted form's backend pays orders here: `rpc.payments.create` (card data: signed by
 * hosted-form-bff only, RPC_CALLERS) and `rpc.payments.get`.
 */
@Injectable()
export class CheckoutRpcHandlers implements OnModuleInit {
  constructor(
    private readonly rpc: Rpc,
    private readonly payOrder: PayOrderWithCheckoutKey,
    private readonly getPayment: GetPaymentWithCheckoutKey,
  ) {}

  onModuleInit(): void {
    this.rpc.serve(RpcSubjects.PaymentsCreate, (request) => this.payOrder.execute(request));
    this.rpc.serve(RpcSubjects.PaymentsGet, (request) => this.getPayment.execute(request));
  }
}
