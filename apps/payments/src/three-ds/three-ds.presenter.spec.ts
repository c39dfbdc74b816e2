import { TRANSACTION_STATUSES } from '@byrd/contracts';
import type { Transaction } from '../transactions/transaction.entity.js';
import type { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import { paymentStatusOf, presentPostAuth, returnUrlOf } from './three-ds.presenter.js';

const transaction = (fields: Partial<Transaction>) =>
  ({
    id: '6f1c2b9e-8d4a-4f7e-9a51-0c3e2d1b4a59',
    status: 'Success',
    redirectUrl: null,
    ...fields,
  }) as Transaction;

describe('postAuth presentation', () => {
  it('reports only a successful payment as Success; failures as Denied or Error', () => {
    const mapped = Object.fromEntries(TRANSACTION_STATUSES.map((s) => [s, paymentStatusOf(s)]));
    expect(mapped).toEqual({
      Created: 'Error',
      Processing: 'Error',
      TemporaryFailed: 'Error',
      Denied: 'Denied',
      Success: 'Success',
      Canceled: 'Denied',
      Error: 'Error',
      PendingMerchantAction: 'Error',
    });
  });

  it("answers the SDK's two-valued transStatus as executePayment: a not enrolled card (EMV U) is Y", () => {
    const ended = (status: ThreeDSSession['status'], transStatus: ThreeDSSession['transStatus']) =>
      ({ id: 'x', status, transStatus, transStatusReason: null }) as ThreeDSSession;
    const answers = (
      [
        ['Authorized', 'Y'],
        ['NotEnrolled', 'U'],
        ['Unauthorized', 'N'],
        ['Expired', 'N'],
      ] as const
    ).map(([status, emv]) => {
      const { transStatus, executePayment } = presentPostAuth(ended(status, emv), transaction({}));
      return [status, transStatus, executePayment];
    });
    expect(answers).toEqual([
      ['Authorized', 'Y', true],
      ['NotEnrolled', 'Y', true],
      ['Unauthorized', 'N', false],
      ['Expired', 'N', false],
    ]);
  });

  it('refuses to present a session that has not ended', () => {
    const open = { id: 'x', status: 'Created', transStatus: null } as ThreeDSSession;
    expect(() => presentPostAuth(open, transaction({}))).toThrow('has not ended');
  });
});

describe('the return address of action.url', () => {
  it("adds transactionId and status to the redirectUrl's query, keeping the rest", () => {
    const url = returnUrlOf(
      transaction({ redirectUrl: 'https://shop.example.com/back?cart=7&status=stale#top', status: 'Denied' }),
    );
    const parsed = new URL(url!);
    expect(Object.fromEntries(parsed.searchParams)).toEqual({
      cart: '7',
      status: 'Denied',
      transactionId: '6f1c2b9e-8d4a-4f7e-9a51-0c3e2d1b4a59',
    });
    expect(parsed.hash).toBe('#top');
  });

  it('has none without an http(s) redirectUrl', () => {
    expect(returnUrlOf(transaction({ redirectUrl: null }))).toBeNull();
    expect(returnUrlOf(transaction({ redirectUrl: 'javascript:alert(1)' }))).toBeNull();
    expect(returnUrlOf(transaction({ redirectUrl: 'not a url' }))).toBeNull();
  });
});
