import { randomUUID } from 'node:crypto';
import {
  createEnvelope,
  transactionOfEventName,
  type EventEnvelope,
  type TransactionEventContent,
  type TransactionEventName,
} from '@byrd/contracts';
import { OutboxMessage, PermanentEventError } from '@byrd/platform';
import type { MediumDatabase } from '@byrd/platform/testing';
import { ApplyTransactionEvent } from '../src/orders/apply-transaction-event.usecase.js';
import { ExpireOrders } from '../src/orders/expire-orders.usecase.js';
import { LockOrderForPayment } from '../src/orders/payment-lock.usecases.js';
import { GetOrder } from '../src/orders/get-order.usecase.js';
import { Order, OrderTransaction } from '../src/orders/order.entity.js';
import { OrdersMedium } from './medium.js';

/**
 * ApplyTransactionEvent on a real PostgreSQL with the orders migrations (medium tier): what a
 * transaction.* event does to an order, its transactions and the order.* events it writes to the
 * outbox (relay off, so they stay there to be read).
 */
describe('ApplyTransactionEvent (medium)', () => {
  let medium: OrdersMedium;
  let db: MediumDatabase;
  let apply: ApplyTransactionEvent;
  let getOrder: GetOrder;
  let expireOrders: ExpireOrders;
  let lockPayment: LockOrderForPayment;
  let merchantId: string;

  beforeAll(async () => {
    medium = await OrdersMedium.start();
    ({ db } = medium);
    apply = new ApplyTransactionEvent(medium.events);
    expireOrders = new ExpireOrders(db.dataSource, medium.events, medium.config);
    getOrder = new GetOrder(db.dataSource, medium.config);
    lockPayment = new LockOrderForPayment(db.dataSource);
  });

  afterAll(() => medium?.close());

  beforeEach(() => {
    merchantId = `merchant-${randomUUID()}`;
  });

  /** An open order of 25.00 EUR, as CreateOrder stores it. */
  async function openOrder(changes: Partial<Order> = {}): Promise<Order> {
    const order = db.dataSource.getRepository(Order).create({
      id: randomUUID(),
      merchantId,
      merchantName: 'Medium',
      merchantMode: 'sandbox',
      checkoutKey: randomUUID(),
      orderRef: 'ref-1',
      isoAmount: 2500,
      currency: 'EUR',
      status: 'created',
      shopper: null,
      orderOptions: null,
      paymentOptions: null,
      metadata: null,
      expiresAt: new Date(Date.now() + 3_600_000),
      paymentId: null,
      lastTransactionId: null,
      refundedIsoAmount: 0,
      paymentLockId: null,
      paymentLockedAt: null,
      canceledAt: null,
      expiredAt: null,
      ...changes,
    });
    return db.dataSource.getRepository(Order).save(order);
  }

  interface Fact {
    transactionId?: string;
    isoAmount?: number;
    sourceTransactionId?: string | null;
    /** The content's own, where it says more than the event name (a release: preauth.canceled). */
    operationType?: TransactionEventContent['operationType'];
    status?: TransactionEventContent['status'];
    /** Payments gave the money back as it arrived (the order was held by another payment). */
    refundedAtOnce?: boolean;
    /** Omitted from the content, as an older producer would: the event name says it instead. */
    omit?: ('operationType' | 'status')[];
  }

  /** Applies the transaction.* event `type` for `order` in one database transaction, as the consumer does. */
  async function deliver(order: Order, type: TransactionEventName, fact: Fact = {}): Promise<string> {
    const transactionId = fact.transactionId ?? randomUUID();
    const named = transactionOfEventName(type);
    const data: TransactionEventContent = {
      transactionId,
      orderId: order.id,
      orderRef: order.orderRef,
      status: fact.status ?? named.status!,
      operationType: fact.operationType ?? named.operationType!,
      amount: ((fact.isoAmount ?? 2500) / 100).toFixed(2),
      isoAmount: fact.isoAmount ?? 2500,
      currency: 'EUR',
      code: 'BYRD200',
      description: 'Operation successfully completed',
      sourceTransactionId: fact.sourceTransactionId ?? null,
      paymentMethod: 'card',
      initiatedFrom: 'Server',
      ...(fact.refundedAtOnce ? { refundedAtOnce: true } : {}),
    };
    for (const field of fact.omit ?? []) Reflect.deleteProperty(data, field);
    const envelope: EventEnvelope = createEnvelope(type, {
      merchantId: order.merchantId,
      paymentMethod: 'card',
      referenceIds: [order.id, transactionId],
      data,
    });
    await db.dataSource.transaction((manager) => apply.execute(envelope, manager));
    return transactionId;
  }

  const reload = (order: Order) => db.dataSource.getRepository(Order).findOneByOrFail({ id: order.id });
  const transactionsOf = (order: Order) =>
    db.dataSource
      .getRepository(OrderTransaction)
      .find({ where: { orderId: order.id }, order: { createdAt: 'ASC' } });
  /** The order.* events written for the order, oldest first. */
  async function envelopesOf(order: Order): Promise<EventEnvelope[]> {
    const rows = await db.dataSource
      .getRepository(OutboxMessage)
      .createQueryBuilder('m')
      .where(`m.payload -> 'data' ->> 'orderId' = :orderId`, { orderId: order.id })
      .andWhere(`m.subject LIKE '%order.%'`)
      .orderBy('m.seq')
      .getMany();
    return rows.map((row) => row.payload as EventEnvelope);
  }
  const eventsOf = async (order: Order) => (await envelopesOf(order)).map((e) => e.type);
  /** Each order.* event written for the order, with the transaction it names. */
  const namedEventsOf = async (order: Order) =>
    (await envelopesOf(order)).map((e) => [
      e.type,
      (e.data as { transactionId: string | null }).transactionId,
    ]);

  it('pays an open order on a successful payment: its transaction, paymentId and order.paid', async () => {
    const order = await openOrder();
    const paymentId = await deliver(order, 'transaction.payment.success');

    expect(await reload(order)).toMatchObject({
      status: 'paid',
      paymentId,
      lastTransactionId: paymentId,
      refundedIsoAmount: 0,
    });
    expect(await transactionsOf(order)).toMatchObject([
      {
        transactionId: paymentId,
        operationType: 'Payment',
        status: 'Success',
        isoAmount: 2500,
        paymentMethod: 'card',
      },
    ]);
    expect(await eventsOf(order)).toEqual(['order.paid']);
  });

  it('keeps a final outcome when a late pending event arrives, and announces nothing again', async () => {
    const order = await openOrder();
    const paymentId = await deliver(order, 'transaction.payment.success');
    await deliver(order, 'transaction.payment.pending', { transactionId: paymentId });

    expect((await reload(order)).status).toBe('paid');
    expect((await transactionsOf(order))[0].status).toBe('Success');
    expect(await eventsOf(order)).toEqual(['order.paid']);
  });

  it('moves a pre-authorised order to pending, paid in part by a capture, then paid in full', async () => {
    const order = await openOrder();
    const preAuthId = await deliver(order, 'transaction.preauth.success');
    expect((await reload(order)).status).toBe('pending');

    await deliver(order, 'transaction.capture.success', { isoAmount: 1000, sourceTransactionId: preAuthId });
    const firstCapture = await reload(order);
    expect(firstCapture.status).toBe('paid');
    await deliver(order, 'transaction.capture.success', { isoAmount: 1500, sourceTransactionId: preAuthId });

    expect(await eventsOf(order)).toEqual(['order.pending', 'order.paid', 'order.partialpaid']);
    expect((await reload(order)).paymentId).toBe(firstCapture.paymentId);
  });

  it('refunds in part, then in full (order.partialrefunded, then order.refunded)', async () => {
    const order = await openOrder();
    const paymentId = await deliver(order, 'transaction.payment.success');
    await deliver(order, 'transaction.refund.success', { isoAmount: 1000, sourceTransactionId: paymentId });
    expect(await reload(order)).toMatchObject({ status: 'paid', refundedIsoAmount: 1000 });
    await deliver(order, 'transaction.refund.success', { isoAmount: 1500, sourceTransactionId: paymentId });

    expect(await reload(order)).toMatchObject({ status: 'refunded', refundedIsoAmount: 2500 });
    expect(await eventsOf(order)).toEqual(['order.paid', 'order.partialrefunded', 'order.refunded']);
  });

  it("gives the order its paymentId and order.paid when a full refund's event comes before its payment's", async () => {
    const order = await openOrder();
    const paymentId = randomUUID();
    const refundId = await deliver(order, 'transaction.refund.success', { sourceTransactionId: paymentId });
    expect((await reload(order)).status).toBe('created');
    await deliver(order, 'transaction.payment.success', { transactionId: paymentId });

    expect(await reload(order)).toMatchObject({
      status: 'refunded',
      paymentId,
      lastTransactionId: refundId,
      refundedIsoAmount: 2500,
    });
    // What happened, in the order it happened: paid (by the payment), then refunded (by the refund).
    expect(await namedEventsOf(order)).toEqual([
      ['order.paid', paymentId],
      ['order.refunded', refundId],
    ]);
  });

  it("announces a partial refund whose event came before its payment's, once the payment is known", async () => {
    const order = await openOrder();
    const paymentId = randomUUID();
    const refundId = await deliver(order, 'transaction.refund.success', {
      isoAmount: 1000,
      sourceTransactionId: paymentId,
    });
    await deliver(order, 'transaction.payment.success', { transactionId: paymentId });

    expect(await reload(order)).toMatchObject({
      status: 'paid',
      paymentId,
      lastTransactionId: refundId,
      refundedIsoAmount: 1000,
    });
    expect(await namedEventsOf(order)).toEqual([
      ['order.paid', paymentId],
      ['order.partialrefunded', refundId],
    ]);
  });

  it('names the refund that succeeded in order.partialrefunded, not another asked for meanwhile', async () => {
    const order = await openOrder();
    const paymentId = await deliver(order, 'transaction.payment.success');
    const refund = { sourceTransactionId: paymentId, isoAmount: 1000 };
    const first = await deliver(order, 'transaction.refund.pending', { ...refund, status: 'Processing' });
    const second = await deliver(order, 'transaction.refund.pending', { ...refund, status: 'Processing' });
    await deliver(order, 'transaction.refund.success', { ...refund, transactionId: first });

    expect(await reload(order)).toMatchObject({
      status: 'paid',
      lastTransactionId: first,
      refundedIsoAmount: 1000,
    });
    expect(await namedEventsOf(order)).toEqual([
      ['order.paid', paymentId],
      ['order.partialrefunded', first],
    ]);
    await deliver(order, 'transaction.refund.success', { ...refund, transactionId: second });
    expect((await namedEventsOf(order)).at(-1)).toEqual(['order.partialrefunded', second]);
  });

  it('reads the operation and status off the event name when the content lacks them', async () => {
    const order = await openOrder();
    const paymentId = await deliver(order, 'transaction.payment.success', {
      omit: ['operationType', 'status'],
    });

    expect(await transactionsOf(order)).toMatchObject([
      { transactionId: paymentId, operationType: 'Payment', status: 'Success' },
    ]);
    expect((await reload(order)).status).toBe('paid');
  });

  /**
   * A successful release of `isoAmount` of `preAuthId`, as payments announces it: the pre-auth's
   * cancellation once nothing is held, else its success (it still holds the rest).
   */
  const release = (order: Order, preAuthId: string, isoAmount: number, fully = isoAmount === 2500) =>
    deliver(order, fully ? 'transaction.preauth.canceled' : 'transaction.preauth.success', {
      operationType: 'Release',
      status: 'Success',
      isoAmount,
      sourceTransactionId: preAuthId,
    });

  it('keeps a pre-authorised order locked after a partial release; the release of the rest frees it', async () => {
    // Payments allows releasing part of a hold: the rest can still be captured, so the order must
    // not become payable again (a second charge) until nothing is held.
    const preAuthId = randomUUID();
    const order = await openOrder({ paymentLockId: preAuthId, paymentLockedAt: new Date() });
    await deliver(order, 'transaction.preauth.success', { transactionId: preAuthId });
    await release(order, preAuthId, 1000);

    expect(await reload(order)).toMatchObject({ status: 'pending', paymentLockId: preAuthId });
    expect((await transactionsOf(order)).find((t) => t.transactionId === preAuthId)?.status).toBe('Success');

    await release(order, preAuthId, 1500, true);
    expect(await reload(order)).toMatchObject({ status: 'created', paymentLockId: null });
    expect((await transactionsOf(order)).find((t) => t.transactionId === preAuthId)?.status).toBe('Canceled');
    expect(await eventsOf(order)).toEqual(['order.pending']);
  });

  it("frees the order when a full release is applied before its pre-authorisation's own success", async () => {
    // Redeliveries and two replicas can apply events out of order: the late success must not hold
    // the order again for money already released.
    const preAuthId = randomUUID();
    const order = await openOrder({ paymentLockId: preAuthId, paymentLockedAt: new Date() });
    await release(order, preAuthId, 2500);
    await deliver(order, 'transaction.preauth.success', { transactionId: preAuthId });

    expect(await reload(order)).toMatchObject({ status: 'created', paymentLockId: null });
    expect((await transactionsOf(order)).find((t) => t.transactionId === preAuthId)?.status).toBe('Canceled');
    expect(await eventsOf(order)).toEqual([]);
  });

  it('expires an order whose pre-authorisation was released in full, not one still holding money', async () => {
    const released = randomUUID();
    const freed = await openOrder({ expiresAt: new Date(Date.now() - 1_000) });
    await deliver(freed, 'transaction.preauth.success', { transactionId: released });
    await release(freed, released, 2500);
    const held = randomUUID();
    const holding = await openOrder({ expiresAt: new Date(Date.now() - 1_000) });
    await deliver(holding, 'transaction.preauth.success', { transactionId: held });
    await release(holding, held, 1000);

    await expireOrders.execute();

    expect((await reload(freed)).status).toBe('expired');
    expect(await eventsOf(freed)).toEqual(['order.pending', 'order.expired']);
    expect((await reload(holding)).status).toBe('pending');
  });

  it("keeps the paying transaction as the order's last when an abandoned attempt ends after it", async () => {
    // The shopper leaves a 3DS challenge, pays with another card, and the first attempt lapses later.
    const order = await openOrder();
    const abandoned = await deliver(order, 'transaction.payment.pending');
    const paying = await deliver(order, 'transaction.payment.success');
    expect(await reload(order)).toMatchObject({ status: 'paid', lastTransactionId: paying });

    await deliver(order, 'transaction.payment.canceled', { transactionId: abandoned });

    expect(await reload(order)).toMatchObject({
      status: 'paid',
      paymentId: paying,
      lastTransactionId: paying,
    });
  });

  it("keeps the paying transaction as the order's last when an older attempt's first event comes after it", async () => {
    // The outbox publishes a batch together and retries the one that failed: the abandoned 3DS
    // attempt's first event (its pending, or only its cancellation) can reach us after the payment.
    const late = await openOrder();
    const paying = await deliver(late, 'transaction.payment.success');
    const abandoned = await deliver(late, 'transaction.payment.pending');
    await deliver(late, 'transaction.payment.canceled', { transactionId: abandoned });
    expect(await reload(late)).toMatchObject({
      status: 'paid',
      paymentId: paying,
      lastTransactionId: paying,
    });
    expect(await eventsOf(late)).toEqual(['order.paid']);

    const onlyCanceled = await openOrder();
    const paid = await deliver(onlyCanceled, 'transaction.payment.success');
    await deliver(onlyCanceled, 'transaction.payment.canceled');
    expect(await reload(onlyCanceled)).toMatchObject({ paymentId: paid, lastTransactionId: paid });

    // Nor from the pre-authorisation holding the order, or the attempt holding its payment lock.
    const authorised = await openOrder();
    const preAuth = await deliver(authorised, 'transaction.preauth.success');
    await deliver(authorised, 'transaction.payment.canceled');
    expect(await reload(authorised)).toMatchObject({ status: 'pending', lastTransactionId: preAuth });
    const card = randomUUID();
    const locked = await openOrder();
    await lockPayment.execute({ orderId: locked.id, merchantId, transactionId: card });
    await deliver(locked, 'transaction.payment.pending', { transactionId: card });
    await deliver(locked, 'transaction.payment.canceled');
    expect(await reload(locked)).toMatchObject({ status: 'pending', lastTransactionId: card });
  });

  it('expires an order whose only money came late and was refunded at once, once the card holding it failed', async () => {
    // A Multibanco reference paid while a card attempt held the order (payments refunded it at
    // once), then the card declined: nothing holds money, so the order lapses like any other.
    const card = randomUUID();
    const order = await openOrder({
      expiresAt: new Date(Date.now() - 1_000),
      paymentLockId: card,
      paymentLockedAt: new Date(),
    });
    const late = await deliver(order, 'transaction.payment.success', { refundedAtOnce: true });
    await deliver(order, 'transaction.refund.success', { sourceTransactionId: late, refundedAtOnce: true });
    await deliver(order, 'transaction.payment.failed', { transactionId: card });
    expect(await reload(order)).toMatchObject({ status: 'created', paymentLockId: null });

    await expireOrders.execute();

    expect((await reload(order)).status).toBe('expired');
    expect((await eventsOf(order)).at(-1)).toBe('order.expired');
  });

  it('gives the lock back when the payment holding it was refunded as it arrived, so the order can be paid or lapse', async () => {
    // An MB WAY payment took the order's lock for its `pay`, then found that we had ended it (a
    // failed push): payments recorded the money and refunded it at once, and was killed before its
    // unlock call. Its event is all that is left to free the order; it succeeded, but holds nothing.
    const mbway = randomUUID();
    const order = await openOrder({
      expiresAt: new Date(Date.now() - 1_000),
      paymentLockId: mbway,
      paymentLockedAt: new Date(),
    });
    await deliver(order, 'transaction.payment.success', { transactionId: mbway, refundedAtOnce: true });
    expect(await reload(order)).toMatchObject({ status: 'created', paymentLockId: null, paymentId: null });

    // The refund's event, redelivered, changes nothing; the order lapses like any other.
    await deliver(order, 'transaction.refund.success', { sourceTransactionId: mbway, refundedAtOnce: true });
    await expireOrders.execute();
    expect((await reload(order)).status).toBe('expired');

    // A lock asked for late by that payment (a paused replica) is refused: it would hold the order for good.
    const open = await openOrder();
    const late = await deliver(open, 'transaction.payment.success', { refundedAtOnce: true });
    await expect(
      lockPayment.execute({ orderId: open.id, merchantId, transactionId: late }),
    ).rejects.toMatchObject({
      message: expect.stringContaining('refunded at once'),
    });
    expect((await reload(open)).paymentLockId).toBeNull();
  });

  it('counts neither a late async payment refunded at once nor its refund, whatever came first', async () => {
    // A Multibanco reference paid while a card attempt held the order: payments records the money
    // and refunds it in one database transaction. The order is the card's, paid once, announced once.
    const card = randomUUID();
    const order = await openOrder({ paymentLockId: card, paymentLockedAt: new Date() });
    const late = await deliver(order, 'transaction.payment.success', { refundedAtOnce: true });
    await deliver(order, 'transaction.refund.success', { sourceTransactionId: late, refundedAtOnce: true });
    expect(await reload(order)).toMatchObject({ status: 'created', paymentId: null, refundedIsoAmount: 0 });

    await deliver(order, 'transaction.payment.success', { transactionId: card });
    expect(await reload(order)).toMatchObject({ status: 'paid', paymentId: card, refundedIsoAmount: 0 });
    expect(await eventsOf(order)).toEqual(['order.paid']);
    expect(await transactionsOf(order)).toHaveLength(3); // still listed

    // The refund's event applied before its payment's (redelivery), the payment seen pending first.
    const other = await openOrder({ paymentLockId: card, paymentLockedAt: new Date() });
    const pending = await deliver(other, 'transaction.payment.pending');
    await deliver(other, 'transaction.refund.success', {
      sourceTransactionId: pending,
      refundedAtOnce: true,
    });
    await deliver(other, 'transaction.payment.success', { transactionId: pending, refundedAtOnce: true });
    expect(await reload(other)).toMatchObject({ status: 'created', paymentId: null, refundedIsoAmount: 0 });
    expect(await eventsOf(other)).toEqual(['order.pending']);

    const canceled = await openOrder({ status: 'canceled', canceledAt: new Date() });
    await deliver(canceled, 'transaction.payment.success', { refundedAtOnce: true });
    expect((await reload(canceled)).status).toBe('canceled');
    expect(await eventsOf(canceled)).toEqual([]);
  });

  it('lists a payment whose money came after it was voided as a success, whichever event came first', async () => {
    // Payments voided a Multibanco reference (Canceled BYRD205), then its money arrived: recorded
    // Success and refunded at once. The merchant's GET shows that, whatever order the events came in.
    const outcomes: string[][] = [];
    for (const voidFirst of [true, false]) {
      const order = await openOrder();
      const reference = randomUUID();
      const voided = () =>
        deliver(order, 'transaction.payment.canceled', { transactionId: reference, status: 'Canceled' });
      const paid = () =>
        deliver(order, 'transaction.payment.success', { transactionId: reference, refundedAtOnce: true });
      if (voidFirst) await voided().then(paid);
      else await paid().then(voided);
      const details = await getOrder.execute(merchantId, order.id);
      outcomes.push([details.status, ...details.transactions.map((t) => t.status)]);
    }
    expect(outcomes).toEqual([
      ['created', 'Success'],
      ['created', 'Success'],
    ]);
  });

  it('announces nothing for a TemporaryFailed event applied after its attempt succeeded', async () => {
    const order = await openOrder();
    const paymentId = await deliver(order, 'transaction.payment.success');
    await deliver(order, 'transaction.payment.error', {
      transactionId: paymentId,
      status: 'TemporaryFailed',
    });

    expect((await reload(order)).status).toBe('paid');
    expect(await eventsOf(order)).toEqual(['order.paid']);
  });

  it('keeps an order pending and held while the payment holding it timed out at the acquirer', async () => {
    // A 3DS (or two-step) payment is announced pending, takes the lock before the acquirer is asked,
    // and the acquirer times out (BYRD203): its outcome is unknown until the recovery settles it.
    const attempt = randomUUID();
    const order = await openOrder();
    await deliver(order, 'transaction.payment.pending', { transactionId: attempt, status: 'Created' });
    await lockPayment.execute({ orderId: order.id, merchantId, transactionId: attempt });
    await deliver(order, 'transaction.payment.error', { transactionId: attempt, status: 'TemporaryFailed' });

    expect(await reload(order)).toMatchObject({ status: 'pending', paymentLockId: attempt });
    expect(await eventsOf(order)).toEqual(['order.pending', 'order.temporaryfailed']);
    expect((await envelopesOf(order)).at(-1)?.data).toMatchObject({ status: 'pending' });

    // The recovery finds the acquirer approved it.
    await deliver(order, 'transaction.payment.success', { transactionId: attempt });
    expect(await reload(order)).toMatchObject({ status: 'paid', paymentId: attempt });
    expect(await eventsOf(order)).toEqual(['order.pending', 'order.temporaryfailed', 'order.paid']);
  });

  it('announces order.temporaryfailed once when the timeout of an attempt is announced twice', async () => {
    // Payments may announce an outcome again under another event id (its recovery, a second producer).
    const attempt = randomUUID();
    const order = await openOrder();
    await deliver(order, 'transaction.payment.error', { transactionId: attempt, status: 'TemporaryFailed' });
    await deliver(order, 'transaction.payment.error', { transactionId: attempt, status: 'TemporaryFailed' });

    expect(await reload(order)).toMatchObject({ status: 'pending', lastTransactionId: attempt });
    expect(await eventsOf(order)).toEqual(['order.pending', 'order.temporaryfailed']);
  });

  it('announces no order.temporaryfailed when a refund of a paid order times out; its success follows', async () => {
    // A refund whose acquirer answer was lost may have given the money back: payments announces it
    // pending and settles it later. The order was paid and stays so; nothing failed "during payment".
    const order = await openOrder();
    const paymentId = await deliver(order, 'transaction.payment.success');
    const refund = { sourceTransactionId: paymentId, isoAmount: 1000 };
    const refundId = await deliver(order, 'transaction.refund.pending', {
      ...refund,
      status: 'TemporaryFailed',
    });

    expect((await reload(order)).status).toBe('paid');
    expect(await eventsOf(order)).toEqual(['order.paid']);

    await deliver(order, 'transaction.refund.success', { ...refund, transactionId: refundId });
    expect(await eventsOf(order)).toEqual(['order.paid', 'order.partialrefunded']);
  });

  it('announces no order.temporaryfailed when a release of a pre-authorisation times out', async () => {
    const preAuthId = randomUUID();
    const order = await openOrder({ paymentLockId: preAuthId, paymentLockedAt: new Date() });
    await deliver(order, 'transaction.preauth.success', { transactionId: preAuthId });
    await deliver(order, 'transaction.preauth.pending', {
      operationType: 'Release',
      status: 'TemporaryFailed',
      sourceTransactionId: preAuthId,
    });

    expect(await reload(order)).toMatchObject({ status: 'pending', paymentLockId: preAuthId });
    expect(await eventsOf(order)).toEqual(['order.pending']);
  });

  it('moves a created order to pending when the payment holding it times out at the acquirer', async () => {
    // A card payment without 3DS is announced only with its outcome: the timeout is the first the
    // order hears of it, and that attempt may still have taken the money.
    const attempt = randomUUID();
    const order = await openOrder();
    await lockPayment.execute({ orderId: order.id, merchantId, transactionId: attempt });
    await deliver(order, 'transaction.payment.error', { transactionId: attempt, status: 'TemporaryFailed' });

    expect(await reload(order)).toMatchObject({ status: 'pending', paymentLockId: attempt });
    expect(await eventsOf(order)).toEqual(['order.pending', 'order.temporaryfailed']);

    // The recovery finds it never reached the acquirer (voided there): payable again.
    await deliver(order, 'transaction.payment.canceled', { transactionId: attempt });
    expect(await reload(order)).toMatchObject({ status: 'created', paymentLockId: null });
  });

  it('frees the order when the attempt holding its payment lock fails, and announces nothing', async () => {
    const attempt = randomUUID();
    const order = await openOrder({ paymentLockId: attempt, paymentLockedAt: new Date() });
    await deliver(order, 'transaction.payment.pending', { transactionId: attempt });
    expect((await reload(order)).paymentLockId).toBe(attempt);
    await deliver(order, 'transaction.payment.failed', { transactionId: attempt });

    expect(await reload(order)).toMatchObject({
      status: 'created',
      paymentLockId: null,
      paymentLockedAt: null,
    });
    // Payable again: back to created, which is not announced.
    expect(await eventsOf(order)).toEqual(['order.pending']);
  });

  it("refuses for good an event of another merchant's order or without a transaction id", async () => {
    const order = await openOrder();
    const other = { ...order, merchantId: `merchant-${randomUUID()}` };
    await expect(deliver(other, 'transaction.payment.success')).rejects.toBeInstanceOf(PermanentEventError);
    await expect(deliver(order, 'transaction.payment.success', { transactionId: '' })).rejects.toBeInstanceOf(
      PermanentEventError,
    );
    expect(await transactionsOf(order)).toEqual([]);
    expect((await reload(order)).status).toBe('created');
  });

  it('shows a GET racing the event the order and its transactions as of one moment', async () => {
    // The event commits the order's status and its transaction together. A GET that read them in two
    // statements showed, when the commit fell between them, a successful payment beside an order
    // still 'created'. Three readers loop while each event commits, for many orders: without one
    // snapshot per GET, several rounds catch the commit between the reads.
    const seen: { order: string; transactions: string[] }[] = [];
    for (let round = 0; round < 60; round++) {
      const order = await openOrder();
      let committed = false;
      const reader = async () => {
        while (!committed) {
          const details = await getOrder.execute(merchantId, order.id);
          seen.push({ order: details.status, transactions: details.transactions.map((t) => t.status) });
        }
      };
      const delivered = deliver(order, 'transaction.payment.success').finally(() => (committed = true));
      await Promise.all([delivered, reader(), reader(), reader()]);
    }

    const torn = seen.filter(
      ({ order, transactions }) => (order === 'paid') !== transactions.includes('Success'),
    );
    expect(torn).toEqual([]);
    // The readers did race the commits: they saw orders both before and after their event.
    expect(seen.some(({ order }) => order === 'paid')).toBe(true);
    expect(seen.some(({ order }) => order === 'created')).toBe(true);
  });
});
