import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  CheckoutPaymentRequest,
  isGuid,
  validateDto,
  type CheckoutPaymentRpcRequest,
  type CheckoutPaymentView,
  type CreatePaymentRequest,
  type OrderSummary,
} from '@byrd/contracts';
import { ApiError, checkedIdempotencyKey } from '@byrd/platform';
import { CreateAsyncPayment } from '../async/create-async-payment.usecase.js';
import { CreatePayment } from '../payments/create-payment.usecase.js';
import { assertOrderAccepts, PayerResolver } from '../payments-core/payer.js';
import { presentCheckoutPayment } from './checkout-payment.presenter.js';

/**
 * `rpc.payments.create` (the hosted form's backend only): the shopper pays the order, proven by its
 * checkout key. Amount, currency and 3DS return address are the order's; the payment itself is an
 * ordinary card (3DS, BYRD207 while the challenge is pending), multibanco or mbway payment,
 * `initiatedFrom: HostedForm`. With `saveCard` the card is stored in the vault once it succeeds.
 * A Multibanco or MB WAY attempt sent again with its `idempotencyKey` answers the payment it made;
 * a card attempt is held to one at a time by the order's payment lock (its key is not used).
 */
@Injectable()
export class PayOrderWithCheckoutKey {
  constructor(
    private readonly payer: PayerResolver,
    private readonly createPayment: CreatePayment,
    private readonly createAsyncPayment: CreateAsyncPayment,
  ) {}

  async execute(request: CheckoutPaymentRpcRequest): Promise<CheckoutPaymentView> {
    const input = validPayment(request);
    const idempotencyKey = checkedIdempotencyKey(request.idempotencyKey, 'idempotencyKey');
    const actor = { checkoutKey: String(request.checkoutKey) };
    const orderId = String(request.orderId);
    const requestId = isGuid(request.requestId) ? request.requestId.toLowerCase() : randomUUID();
    if (input.type !== 'card') {
      saveCardReferenceOf(null, input); // refused: only a card can be saved
      // Read whatever its state: an attempt sent again (its answer was lost, a double click)
      // answers the payment it made, even once that one paid the order; a new one is refused by
      // `attempt` as any payment of a closed order is.
      const order = await this.payer.orderOfCheckoutKey(orderId, actor.checkoutKey);
      const transaction = await this.createAsyncPayment.attempt(
        actor,
        paymentOf(order, input),
        requestId,
        idempotencyKey,
      );
      return presentCheckoutPayment(transaction, null);
    }
    const { order } = await this.payer.resolve(actor, { orderId });
    const saveCardReference = saveCardReferenceOf(order, input);
    assertOrderAccepts(order, input.type);
    const { transaction, session } = await this.createPayment.create(
      actor,
      paymentOf(order!, input),
      requestId,
      { saveCardReference },
    );
    return presentCheckoutPayment(transaction, session);
  }
}

/** The payment the shopper's input makes of the order: its amount, currency and return address. */
function paymentOf(order: OrderSummary, input: CheckoutPaymentRequest): CreatePaymentRequest {
  return {
    type: input.type,
    orderId: order.orderId,
    isoAmount: order.isoAmount,
    currency: order.currency,
    redirectUrl: order.redirectUrl ?? undefined,
    ...(input.type === 'card' ? { card: input.card } : {}),
    ...(input.type === 'mbway' ? { mbway: input.mbway } : {}),
  };
}

/** The payment part of the request, checked like the hosted form's own body (`card.number`, ...). */
function validPayment(request: CheckoutPaymentRpcRequest): CheckoutPaymentRequest {
  const checked = validateDto(CheckoutPaymentRequest, {
    ...(typeof request?.payment === 'object' ? request.payment : {}),
    saveCard: request?.saveCard ?? false,
  });
  if (!checked.ok) {
    const fields = [...new Set(checked.errors.map((e) => e.field || 'payment'))];
    throw ApiError.invalid(`Invalid value for ${fields.join(', ')}`, checked.errors);
  }
  const input = checked.value;
  if (input.type === 'card' && !input.card)
    throw ApiError.invalidField('card', 'is required for card payments');
  if (input.type === 'mbway' && !input.mbway) {
    throw ApiError.invalidField('mbway.phoneNumber', 'is required for MB WAY payments');
  }
  return input;
}

/** The reference to save the card under, when the shopper asked; refused where the order offers no saving. */
function saveCardReferenceOf(order: OrderSummary | null, input: CheckoutPaymentRequest): string | undefined {
  if (!input.saveCard) return undefined;
  if (input.type !== 'card') {
    throw ApiError.invalidField('saveCard', `only a card can be saved, not a ${input.type} payment`);
  }
  const reference = order?.tokenOptions?.customReference;
  if (!reference) {
    throw ApiError.invalidField(
      'saveCard',
      'this order does not offer to save the card (it has no paymentOptions.tokenOptions.customReference)',
    );
  }
  return reference;
}
