import {
  deriveOrderStatus,
  eventForTransition,
  transitionEvents,
  keepsPaymentLock,
  mergeTransactionStatus,
  partialEvent,
  type TransactionFact,
} from './order-status.js';

const tx = (
  operationType: TransactionFact['operationType'],
  status: TransactionFact['status'],
  isoAmount = 1000,
): TransactionFact => ({
  transactionId: `${operationType}-${status}-${isoAmount}`,
  operationType,
  status,
  isoAmount,
});
const open = { canceledAt: null, expiredAt: null };

describe('deriveOrderStatus', () => {
  it('is created with no transactions or only failed attempts', () => {
    expect(deriveOrderStatus({ ...open, transactions: [] })).toBe('created');
    expect(
      deriveOrderStatus({
        ...open,
        transactions: [tx('Payment', 'Denied'), tx('Payment', 'Error'), tx('PreAuth', 'Canceled')],
      }),
    ).toBe('created');
  });

  it('is pending while a payment runs or a pre-authorisation waits for capture', () => {
    expect(deriveOrderStatus({ ...open, transactions: [tx('Payment', 'Processing')] })).toBe('pending');
    // Timed out at the acquirer: not failed, its outcome comes with the recovery.
    expect(
      deriveOrderStatus({
        ...open,
        transactions: [tx('Payment', 'Denied'), tx('Payment', 'TemporaryFailed')],
      }),
    ).toBe('pending');
    expect(deriveOrderStatus({ ...open, transactions: [tx('PreAuth', 'TemporaryFailed')] })).toBe('pending');
    expect(deriveOrderStatus({ ...open, transactions: [tx('PreAuth', 'Success')] })).toBe('pending');
    expect(deriveOrderStatus({ ...open, transactions: [tx('PreAuth', 'Canceled')] })).toBe('created');
  });

  it('is paid after a successful payment or capture, refunded once refunds cover it', () => {
    expect(deriveOrderStatus({ ...open, transactions: [tx('Payment', 'Success')] })).toBe('paid');
    expect(
      deriveOrderStatus({ ...open, transactions: [tx('PreAuth', 'Success'), tx('Capture', 'Success')] }),
    ).toBe('paid');
    const paid = tx('Payment', 'Success', 1000);
    expect(deriveOrderStatus({ ...open, transactions: [paid, tx('Refund', 'Success', 400)] })).toBe('paid');
    expect(
      deriveOrderStatus({
        ...open,
        transactions: [paid, tx('Refund', 'Success', 400), tx('Refund', 'Success', 600)],
      }),
    ).toBe('refunded');
    expect(deriveOrderStatus({ ...open, transactions: [paid, tx('Refund', 'Denied', 1000)] })).toBe('paid');
  });

  it('lets money taken win over cancel and expiry, which otherwise stick', () => {
    const canceled = { canceledAt: new Date(), expiredAt: null };
    expect(deriveOrderStatus({ ...canceled, transactions: [] })).toBe('canceled');
    expect(
      deriveOrderStatus({
        canceledAt: null,
        expiredAt: new Date(),
        transactions: [tx('Payment', 'Processing')],
      }),
    ).toBe('expired');
    expect(deriveOrderStatus({ ...canceled, transactions: [tx('Payment', 'Success')] })).toBe('paid');
  });
});

describe('mergeTransactionStatus', () => {
  it('never lets a late non-final status undo a final one', () => {
    expect(mergeTransactionStatus('Success', 'Processing')).toBe('Success');
    expect(mergeTransactionStatus('Processing', 'Success')).toBe('Success');
    expect(mergeTransactionStatus('TemporaryFailed', 'Success')).toBe('Success');
    expect(mergeTransactionStatus('Success', 'Canceled')).toBe('Canceled');
    expect(mergeTransactionStatus(undefined, 'Created')).toBe('Created');
  });

  it('keeps the success of money refunded at once over the end payments gave the payment before it', () => {
    expect(mergeTransactionStatus('Success', 'Canceled', true)).toBe('Success');
    expect(mergeTransactionStatus('Success', 'Error', true)).toBe('Success');
    expect(mergeTransactionStatus('Canceled', 'Success', true)).toBe('Success');
    expect(mergeTransactionStatus('Success', 'Processing', true)).toBe('Success');
  });
});

describe('eventForTransition', () => {
  it('announces the statuses merchants act on, and nothing when an order falls back to created', () => {
    expect(eventForTransition('created', 'pending')).toBe('order.pending');
    expect(eventForTransition('pending', 'paid')).toBe('order.paid');
    expect(eventForTransition('paid', 'refunded')).toBe('order.refunded');
    expect(eventForTransition('pending', 'created')).toBeNull();
    expect(eventForTransition('paid', 'paid')).toBeNull();
  });

  it('announces a payment learned of after its full refund as paid, then refunded', () => {
    expect(transitionEvents('created', 'refunded')).toEqual(['order.paid', 'order.refunded']);
    expect(transitionEvents('canceled', 'refunded')).toEqual(['order.paid', 'order.refunded']);
    expect(transitionEvents('paid', 'refunded')).toEqual(['order.refunded']);
    expect(transitionEvents('pending', 'paid')).toEqual(['order.paid']);
    expect(transitionEvents('paid', 'paid')).toEqual([]);
  });

  it('keeps the payment lock while an attempt may be charging or holds money', () => {
    for (const status of [
      'Created',
      'Processing',
      'PendingMerchantAction',
      'TemporaryFailed',
      'Success',
    ] as const)
      expect(keepsPaymentLock({ status })).toBe(true);
    for (const status of ['Denied', 'Error', 'Canceled'] as const)
      expect(keepsPaymentLock({ status })).toBe(false);
  });

  it('gives the lock back for a payment refunded as it arrived, though it succeeded', () => {
    expect(keepsPaymentLock({ status: 'Success', refundedAtOnce: true })).toBe(false);
    expect(keepsPaymentLock({ status: 'Success', refundedAtOnce: false })).toBe(true);
  });
});

describe('partialEvent', () => {
  const order = (status: 'paid' | 'refunded' | 'pending') => ({ isoAmount: 1000, status });

  it('announces a capture that takes less than the order, and none once captures cover it', () => {
    const part = [tx('PreAuth', 'Success'), tx('Capture', 'Success', 400)];
    expect(partialEvent('Capture', order('paid'), part)).toBe('order.partialpaid');
    const whole = [...part, tx('Capture', 'Success', 600)];
    expect(partialEvent('Capture', order('paid'), whole)).toBeNull();
  });

  it('announces a refund that leaves the order paid, and none for the one that refunds it all', () => {
    const paid = [tx('Payment', 'Success', 1000)];
    expect(partialEvent('Refund', order('paid'), [...paid, tx('Refund', 'Success', 300)])).toBe(
      'order.partialrefunded',
    );
    const all = [...paid, tx('Refund', 'Success', 300), tx('Refund', 'Success', 700)];
    expect(partialEvent('Refund', order('refunded'), all)).toBeNull();
  });

  it('has nothing to say of payments, pre-authorisations or releases', () => {
    const paid = [tx('Payment', 'Success', 400)];
    expect(partialEvent('Payment', order('paid'), paid)).toBeNull();
    expect(partialEvent('PreAuth', order('pending'), [tx('PreAuth', 'Success')])).toBeNull();
  });
});
