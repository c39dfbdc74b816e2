import {
  ALL_EVENT_NAMES,
  ChargebackEvents,
  eventFamily,
  isEventName,
  OrderEvents,
  parseTransactionEventName,
  SUBSCRIBABLE_EVENT_NAMES,
  TransactionEvents,
  transactionEventName,
} from './catalogue.js';

describe('event catalogue', () => {
  it('has exactly 9 order, 20 transaction and 6 chargeback events', () => {
    expect(Object.values(OrderEvents)).toHaveLength(9);
    expect(Object.values(TransactionEvents)).toHaveLength(20);
    expect(Object.values(ChargebackEvents)).toHaveLength(6);
    expect(ALL_EVENT_NAMES).toHaveLength(35);
    // The public .NET client's 55: the 35 sent, and 20 order-level names accepted but never sent.
    expect(SUBSCRIBABLE_EVENT_NAMES).toHaveLength(55);
    expect(new Set(SUBSCRIBABLE_EVENT_NAMES).size).toBe(55);
    expect(SUBSCRIBABLE_EVENT_NAMES).toEqual(
      expect.arrayContaining(['order.partialpaid', 'order.payment.success', 'order.refund.canceled']),
    );
    expect(new Set(ALL_EVENT_NAMES).size).toBe(35);
  });

  it('spells the names of SPEC.md', () => {
    expect(OrderEvents.Paid).toBe('order.paid');
    expect(OrderEvents.TemporaryFailed).toBe('order.temporaryfailed');
    expect(TransactionEvents.PaymentSuccess).toBe('transaction.payment.success');
    expect(TransactionEvents.PreAuthCanceled).toBe('transaction.preauth.canceled');
    expect(ChargebackEvents.PendingAction).toBe('chargeback.pendingaction');
    expect(ChargebackEvents.Won).toBe('chargeback.won');
  });

  it('recognises names and their families', () => {
    expect(isEventName('order.paid')).toBe(true);
    expect(isEventName('order.PAID')).toBe(false);
    expect(isEventName('transaction.release.success')).toBe(false);
    expect(isEventName(42)).toBe(false);
    expect(eventFamily('order.expired')).toBe('order');
    expect(eventFamily('transaction.capture.error')).toBe('transaction');
    expect(eventFamily('chargeback.lost')).toBe('chargeback');
  });

  it('builds and splits transaction event names', () => {
    expect(transactionEventName('refund', 'failed')).toBe(TransactionEvents.RefundFailed);
    expect(parseTransactionEventName('transaction.preauth.pending')).toEqual({
      kind: 'preauth',
      outcome: 'pending',
    });
  });
});
