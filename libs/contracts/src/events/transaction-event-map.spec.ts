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

  it('announces a release as the end of its pre-authorisation', () => {
    expect(transactionEventNameOf('Release', 'Success')).toBe('transaction.preauth.canceled');
    expect(transactionEventNameOf('Release', 'Error')).toBe('transaction.preauth.error');
    expect(transactionEventNameOf('Refund', 'TemporaryFailed')).toBe('transaction.refund.error');
    expect(transactionEventNameOf('Payment', 'PendingMerchantAction')).toBe('transaction.payment.pending');
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
