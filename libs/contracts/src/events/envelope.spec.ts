import { createEnvelope, EnvelopeError, parseEnvelope, type EventEnvelope } from './envelope.js';
import { toPublicContent, type OrderEventContent, type TransactionEventContent } from './content.js';

const orderId = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const transactionId = 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f';

const paid = (): EventEnvelope<'order.paid'> =>
  createEnvelope('order.paid', {
    merchantId: 'merchant-1',
    paymentMethod: 'card',
    occurredAt: new Date('2025-01-02T03:04:05.000Z'),
    data: {
      orderId,
      orderRef: 'shop-42',
      status: 'paid',
      paymentId: transactionId,
      transactionId,
      amount: '10.00',
      currency: 'EUR',
    },
  });

describe('createEnvelope', () => {
  it('fills id, timestamp and reference ids', () => {
    const envelope = paid();
    expect(envelope.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(envelope.occurredAt).toBe('2025-01-02T03:04:05.000Z');
    expect(envelope.referenceIds).toEqual([orderId, transactionId]);
  });
});

describe('parseEnvelope', () => {
  it('round-trips an envelope through JSON text and bytes', () => {
    const envelope = paid();
    expect(parseEnvelope(JSON.stringify(envelope))).toEqual(envelope);
    expect(parseEnvelope(new TextEncoder().encode(JSON.stringify(envelope)))).toEqual(envelope);
  });

  it('narrows data by type', () => {
    const parsed = parseEnvelope(JSON.stringify(paid()));
    if (parsed.type !== 'order.paid') throw new Error('expected order.paid');
    const content: OrderEventContent = parsed.data;
    expect(content.status).toBe('paid');
  });

  it('names every malformed field', () => {
    const broken = {
      ...paid(),
      id: 'not-a-guid',
      occurredAt: 'yesterday',
      paymentMethod: 'cash',
      data: { ...paid().data, status: 'PAID', amount: 10 },
    };
    let error: unknown;
    try {
      parseEnvelope(broken);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(EnvelopeError);
    expect((error as EnvelopeError).issues).toEqual([
      'id must be a lowercase GUID, got "not-a-guid"',
      'occurredAt must be an ISO 8601 timestamp, got "yesterday"',
      'paymentMethod must be a payment method or null, got "cash"',
      'data.status must be one of created, pending, paid, refunded, canceled, expired, got "PAID"',
      'data.amount must be a decimal string, got 10',
    ]);
  });

  it('tells values a newer build may have added from malformed ones', () => {
    const errorOf = (envelope: unknown): EnvelopeError => {
      try {
        parseEnvelope(envelope);
      } catch (caught) {
        return caught as EnvelopeError;
      }
      throw new Error('parsed');
    };
    const payment = {
      ...paid(),
      type: 'transaction.payment.failed',
      data: {
        transactionId,
        orderId,
        orderRef: null,
        status: 'Denied',
        operationType: 'Payment',
        amount: '10.00',
        currency: 'EUR',
        code: 'BYRD200',
        description: 'x',
      },
    };
    expect(() => parseEnvelope(payment)).not.toThrow();
    const unknown = [
      { ...payment, data: { ...payment.data, code: 'BYRD298' } },
      { ...payment, paymentMethod: 'klarna', data: { ...payment.data, paymentMethod: 'klarna' } },
      { ...payment, data: { ...payment.data, status: 'Reversed', operationType: 'Reversal' } },
      { ...payment, data: { ...payment.data, currency: 'XYZ' } },
      { ...paid(), data: { ...paid().data, status: 'shipped' } },
    ];
    for (const envelope of unknown) expect(errorOf(envelope).onlyUnknownValues).toBe(true);
    const malformed = [
      { ...payment, data: { ...payment.data, code: 'nonsense' } },
      { ...payment, data: { ...payment.data, code: 'BYRD298', amount: 10 } },
      { ...payment, paymentMethod: 42 },
      { ...paid(), data: { ...paid().data, status: 'paid; DROP' } },
      { ...paid(), type: 'order.shipped' },
      // A producer's bugs, not a newer build's words: another case, a leaked undefined, no object.
      { ...paid(), data: { ...paid().data, status: 'Paid' } },
      { ...paid(), data: { ...paid().data, status: 'undefined' } },
      { ...payment, data: { ...payment.data, status: 'success' } },
      { ...paid(), data: null },
      { ...paid(), data: 'paid' },
    ];
    for (const envelope of malformed) expect(errorOf(envelope).onlyUnknownValues).toBe(false);
  });

  it('rejects unknown event types, missing data and invalid JSON', () => {
    expect(() => parseEnvelope({ ...paid(), type: 'order.shipped' })).toThrow(/type must be an event name/);
    expect(() => parseEnvelope({ ...paid(), data: undefined })).toThrow(
      /data must be an object, got nothing/,
    );
    expect(() => parseEnvelope('{"id":')).toThrow('Malformed event envelope: the envelope is not valid JSON');
    expect(() => parseEnvelope(null)).toThrow(EnvelopeError);
  });

  it('checks content against the family of the type', () => {
    const envelope = { ...paid(), type: 'transaction.payment.success' };
    expect(() => parseEnvelope(envelope)).toThrow(/data\.operationType must be one of Payment/);
  });
});

describe('toPublicContent', () => {
  it('delivers only the documented transaction fields', () => {
    const data: TransactionEventContent = {
      transactionId,
      orderId,
      orderRef: null,
      status: 'Success',
      operationType: 'Payment',
      amount: '10.00',
      currency: 'EUR',
      code: 'BYRD200',
      description: 'Operation successfully completed',
      isoAmount: 1000,
      initiatedFrom: 'HostedForm',
    };
    expect(toPublicContent('transaction.payment.success', data)).toEqual({
      transactionId,
      orderId,
      orderRef: null,
      status: 'Success',
      operationType: 'Payment',
      amount: '10.00',
      currency: 'EUR',
      code: 'BYRD200',
      description: 'Operation successfully completed',
    });
  });
});

/**
 * What the envelope types forbid, checked by the compiler and never run: `npm run typecheck -w
 * @byrd/contracts` fails when a line marked @ts-expect-error stops being an error (Jest strips types).
 */
function _envelopeTypeContract(
  order: OrderEventContent,
  transaction: TransactionEventContent,
  envelope: EventEnvelope,
): void {
  createEnvelope('order.paid', { merchantId: 'merchant-1', data: order });
  // @ts-expect-error an order event cannot carry transaction content
  createEnvelope('order.paid', { merchantId: 'merchant-1', data: transaction });
  // @ts-expect-error a transaction event cannot carry order content
  createEnvelope('transaction.payment.success', { merchantId: 'merchant-1', data: order });
  // @ts-expect-error only catalogue events have an envelope
  createEnvelope('order.shipped', { merchantId: 'merchant-1', data: order });
  // @ts-expect-error an order.paid envelope's data is order content
  const _orderData: EventEnvelope<'order.paid'>['data'] = transaction;

  // @ts-expect-error before narrowing by type, data may be order or chargeback content
  const _unnarrowed: TransactionEventContent = envelope.data;
  if (envelope.type === 'order.paid') {
    // @ts-expect-error narrowed to order content, which has no operation type
    void envelope.data.operationType;
  }
}
