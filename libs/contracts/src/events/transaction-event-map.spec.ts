import { OPERATION_TYPES, TRANSACTION_STATUSES } from '../enums.js';
import { ALL_EVENT_NAMES, TRANSACTION_EVENT_KINDS, TRANSACTION_EVENT_OUTCOMES } from './catalogue.js';
import { transactionEventNameOf, transactionOfEventName } from './transaction-event-map.js';

describe('transaction event map', () => {
  it('announces every operation in every status as an event of the catalogue', () => {
    for (const operation of OPERATION_TYPES) {
      for (const status of TRANSACTION_STATUSES) {
        expect(ALL_EVENT_NAMES).toContain(transactionEventNameOf(operation, status));
      }
    }
  });

  it('announces a release as the end of its pre-authorisation only once it holds nothing', () => {
    expect(transactionEventNameOf('Release', 'Success', { fullyReleased: true })).toBe(
      'transaction.preauth.canceled',
    );
    // A partial release: the pre-authorisation still holds the rest.
    expect(transactionEventNameOf('Release', 'Success', { fullyReleased: false })).toBe(
      'transaction.preauth.success',
    );
    expect(transactionEventNameOf('Release', 'Denied')).toBe('transaction.preauth.failed');
    expect(transactionEventNameOf('Release', 'Error')).toBe('transaction.preauth.error');
    expect(transactionEventNameOf('Release', 'TemporaryFailed')).toBe('transaction.preauth.pending');
    expect(transactionEventNameOf('Payment', 'PendingMerchantAction')).toBe('transaction.payment.pending');
  });

  it('announces a capture or refund whose outcome is unknown (timed out) as pending, a payment as an error', () => {
    expect(transactionEventNameOf('Refund', 'TemporaryFailed')).toBe('transaction.refund.pending');
    expect(transactionEventNameOf('Capture', 'TemporaryFailed')).toBe('transaction.capture.pending');
    expect(transactionEventNameOf('Refund', 'Error')).toBe('transaction.refund.error');
    expect(transactionEventNameOf('Payment', 'TemporaryFailed')).toBe('transaction.payment.error');
    expect(transactionEventNameOf('PreAuth', 'TemporaryFailed')).toBe('transaction.preauth.error');
  });

  it('reads back from each name the operation and a status that is announced as that name', () => {
    for (const kind of TRANSACTION_EVENT_KINDS) {
      for (const outcome of TRANSACTION_EVENT_OUTCOMES) {
        const name = `transaction.${kind}.${outcome}`;
        const { operationType, status } = transactionOfEventName(name);
        expect(transactionEventNameOf(operationType!, status!)).toBe(name);
      }
    }
    expect(transactionOfEventName('transaction.payment.pending')).toEqual({
      operationType: 'Payment',
      status: 'Processing',
    });
  });

  it('reads nothing from segments outside the catalogue', () => {
    expect(transactionOfEventName('transaction.toString.constructor')).toEqual({
      operationType: undefined,
      status: undefined,
    });
    expect(transactionOfEventName('order.paid')).toEqual({ operationType: undefined, status: undefined });
  });
});
