import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { toFieldErrors, validateDto, VALIDATOR_OPTIONS } from '../validate.js';
import { CreateOrderRequest } from './orders.dto.js';

const fieldsOf = (plain: unknown): string[] => {
  const result = validateDto(CreateOrderRequest, plain);
  return result.ok ? [] : result.errors.map((error) => error.field);
};

describe('CreateOrderRequest', () => {
  const minimal = { amount: '10.00', currency: 'EUR' };

  it('accepts a full order as real clients send it', () => {
    const result = validateDto(CreateOrderRequest, {
      amount: '25.50',
      currency: 'EUR',
      orderRef: 'shop-42',
      expiresIn: '00:30:00',
      shopper: {
        firstName: 'Ana',
        lastName: 'Silva',
        email: 'ana@example.com',
        phoneNumber: '+351910000000',
      },
      orderOptions: { redirectUrl: 'https://shop.example.com/return', culture: 'pt-PT' },
      paymentOptions: {
        cardOptions: { isPreAuth: 'true' },
        tokenOptions: { customReference: 'customer-7', tokenizationIsRequired: false },
        allowedPaymentMethods: ['card', 'mbway'],
      },
      metadata: { cartId: 'c-1', nested: { any: ['thing'] } },
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toBeInstanceOf(CreateOrderRequest);
    expect(result.value.paymentOptions?.cardOptions?.isPreAuth).toBe(true);
    expect(result.value.metadata).toEqual({ cartId: 'c-1', nested: { any: ['thing'] } });
  });

  it('accepts isoAmount as a number or a numeric string instead of amount', () => {
    const fromString = plainToInstance(CreateOrderRequest, { isoAmount: '1000', currency: 'JPY' });
    expect(validateSync(fromString, VALIDATOR_OPTIONS)).toEqual([]);
    expect(fromString.isoAmount).toBe(1000);
    expect(fieldsOf({ isoAmount: 1000, currency: 'EUR' })).toEqual([]);
  });

  it('requires amount or isoAmount, reported once on amount', () => {
    const result = validateDto(CreateOrderRequest, { currency: 'EUR' });
    expect(result).toEqual({
      ok: false,
      errors: [{ field: 'amount', message: 'amount or isoAmount is required' }],
    });
  });

  it('rejects amounts that are not positive decimals or do not fit the currency', () => {
    expect(fieldsOf({ ...minimal, amount: '0.00' })).toEqual(['amount']);
    expect(fieldsOf({ ...minimal, amount: '-1' })).toEqual(['amount']);
    expect(fieldsOf({ ...minimal, amount: '10.001' })).toEqual(['amount']);
    expect(fieldsOf({ amount: '10.50', currency: 'JPY' })).toEqual(['amount']);
    expect(fieldsOf({ amount: '1.234', currency: 'KWD' })).toEqual([]);
    expect(validateDto(CreateOrderRequest, { amount: '10.5', currency: 'JPY' })).toEqual({
      ok: false,
      errors: [{ field: 'amount', message: 'amount has more decimals than JPY allows (0)' }],
    });
    expect(fieldsOf({ isoAmount: '10.5', currency: 'EUR' })).toEqual(['isoAmount']);
    expect(fieldsOf({ isoAmount: 0, currency: 'EUR' })).toEqual(['isoAmount']);
    expect(fieldsOf({ isoAmount: 2 ** 53, currency: 'EUR' })).toEqual(['isoAmount']);
  });

  it('accepts a JSON number for amount', () => {
    const result = validateDto(CreateOrderRequest, { amount: 10.5, currency: 'EUR' });
    expect(result.ok && result.value.amount).toBe('10.5');
  });

  it('validates the currency case-sensitively', () => {
    expect(fieldsOf({ ...minimal, currency: 'eur' })).toEqual(['currency']);
    expect(fieldsOf({ ...minimal, currency: 'EURO' })).toEqual(['currency']);
    expect(fieldsOf({ amount: '10.00' })).toEqual(['currency']);
  });

  it('accepts expiresIn as a timespan or minutes and rejects the rest', () => {
    expect(fieldsOf({ ...minimal, expiresIn: 60 })).toEqual([]);
    expect(fieldsOf({ ...minimal, expiresIn: '60' })).toEqual([]);
    expect(fieldsOf({ ...minimal, expiresIn: '01:00:00' })).toEqual([]);
    const result = validateDto(CreateOrderRequest, { ...minimal, expiresIn: '31.00:00:00' });
    expect(result).toEqual({
      ok: false,
      errors: [{ field: 'expiresIn', message: 'expiresIn must be at most 30 days' }],
    });
    expect(fieldsOf({ ...minimal, expiresIn: 'tomorrow' })).toEqual(['expiresIn']);
  });

  it('reports nested errors by property path', () => {
    expect(
      fieldsOf({
        ...minimal,
        shopper: { email: 'not-an-email' },
        orderOptions: { redirectUrl: 'javascript:alert(1)' },
        paymentOptions: {
          cardOptions: { isPreAuth: 'maybe' },
          tokenOptions: {},
          allowedPaymentMethods: ['card', 'bitcoin'],
        },
      }),
    ).toEqual([
      'shopper.email',
      'orderOptions.redirectUrl',
      'paymentOptions.cardOptions.isPreAuth',
      'paymentOptions.tokenOptions.customReference',
      'paymentOptions.allowedPaymentMethods',
    ]);
  });

  it('names the allowed values in enum messages', () => {
    const result = validateDto(CreateOrderRequest, {
      ...minimal,
      paymentOptions: { allowedPaymentMethods: ['x'] },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors[0]?.message).toContain(
      'each value in allowedPaymentMethods must be one of: card, ideal',
    );
  });

  it('rejects a non-object metadata and a non-object body', () => {
    expect(fieldsOf({ ...minimal, metadata: 'x' })).toEqual(['metadata']);
    expect(validateDto(CreateOrderRequest, [minimal])).toEqual({
      ok: false,
      errors: [{ field: '', message: 'the body must be a JSON object' }],
    });
  });

  it('strips unknown properties instead of failing', () => {
    const result = validateDto(CreateOrderRequest, { ...minimal, somethingNew: 1 });
    expect(result.ok).toBe(true);
    expect(result.ok && 'somethingNew' in result.value).toBe(false);
  });

  it('flattens errors of class-validator itself', () => {
    const errors = validateSync(plainToInstance(CreateOrderRequest, { amount: 'ten', currency: 'EUR' }));
    expect(toFieldErrors(errors)).toEqual([
      { field: 'amount', message: 'amount must be a decimal amount string such as "10.00"' },
    ]);
  });
});
