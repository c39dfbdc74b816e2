import { validateDto } from '../validate.js';
import { CaptureRequest, RefundRequest, ReleaseRequest } from './operations.dto.js';

describe.each([CaptureRequest, RefundRequest, ReleaseRequest])('%p body', (cls) => {
  it('reads isoAmount and amount, numeric strings included', () => {
    expect(validateDto(cls, { isoAmount: '1000' })).toEqual({ ok: true, value: { isoAmount: 1000 } });
    expect(validateDto(cls, { amount: 10.5 })).toEqual({ ok: true, value: { amount: '10.5' } });
  });

  it('leaves an empty body empty: the whole remaining amount', () => {
    expect(validateDto(cls, {})).toEqual({ ok: true, value: {} });
  });

  // A dropped amount is not harmless here: the operation would move the whole balance.
  it.each([
    [{ IsoAmount: 1000 }, { isoAmount: 1000 }],
    [{ iso_amount: '1000' }, { isoAmount: 1000 }],
    [{ ISOAMOUNT: 1000, TransactionId: 'x' }, { isoAmount: 1000 }],
    [{ Amount: '10.00' }, { amount: '10.00' }],
    [
      { TransactionId: 'x', IsoAmount: 1000, Amount: 10 },
      { isoAmount: 1000, amount: '10' },
    ],
  ])('reads the amount spelt otherwise: %j', (body, value) => {
    expect(validateDto(cls, body)).toEqual({ ok: true, value });
  });

  it('keeps the canonical name when both spellings are sent', () => {
    expect(validateDto(cls, { isoAmount: 500, IsoAmount: 1000 })).toEqual({
      ok: true,
      value: { isoAmount: 500 },
    });
  });

  it.each([
    [{ isoAmount: null }, 'isoAmount'],
    [{ amount: null }, 'amount'],
    [{ IsoAmount: null }, 'isoAmount'],
    [{ isoAmount: 'NaN' }, 'isoAmount'],
  ])('refuses %j instead of reading it as no amount', (body, field) => {
    const result = validateDto(cls, body);
    expect(result).toMatchObject({ ok: false, errors: [{ field }] });
  });
});
