import { CreatePaymentRequest, ListTokensQuery } from '@byrd/contracts';
import { ApiError } from './api-error.js';
import { createValidationPipe } from './validation.js';

const card = { number: '5448280000000007', expiration: '12/30', cvv: '123', holder: 'Ana Silva' };
const payment = { type: 'card', isoAmount: 1100, currency: 'EUR', orderRef: 'r-1', card };

async function refusal(run: () => Promise<unknown>) {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return {
      code: (error as ApiError).code,
      message: error instanceof Error ? error.message : '',
      errors: (error as ApiError).errors,
    };
  }
  throw new Error('expected a refusal');
}

describe('the global validation pipe', () => {
  const pipe = createValidationPipe();

  it('refuses NUL and unpaired surrogates in a body, naming the fields, before the DTO rules', async () => {
    const refused = await refusal(() =>
      pipe.transform(
        { ...payment, orderRef: 'r\u0000', card: { ...card, holder: 'Ana\uD800' }, cvv: 'not a rule error' },
        { type: 'body', metatype: CreatePaymentRequest },
      ),
    );
    expect(refused).toEqual({
      code: 'BYRD900',
      message: 'Invalid value for card.holder, orderRef',
      errors: [
        { field: 'card.holder', message: expect.stringMatching(/surrogate/) },
        { field: 'orderRef', message: expect.stringMatching(/NUL/) },
      ],
    });
  });

  it('checks query strings and path parameters too, whether whole objects or single values', async () => {
    expect(
      (
        await refusal(() =>
          pipe.transform({ customReference: 'c\u0000' }, { type: 'query', metatype: ListTokensQuery }),
        )
      ).errors,
    ).toEqual([{ field: 'customReference', message: expect.stringMatching(/NUL/) }]);
    expect(
      (await refusal(() => pipe.transform('a\u0000', { type: 'query', metatype: String, data: 'orderRef' })))
        .errors,
    ).toEqual([{ field: 'orderRef', message: expect.stringMatching(/NUL/) }]);
    expect(
      (
        await refusal(() =>
          pipe.transform('\uDC00', { type: 'param', metatype: String, data: 'transactionId' }),
        )
      ).errors,
    ).toEqual([{ field: 'transactionId', message: expect.stringMatching(/surrogate/) }]);
    expect(
      (await refusal(() => pipe.transform({ tokenId: '\u0000' }, { type: 'param', metatype: Object })))
        .errors![0].field,
    ).toBe('tokenId');
  });

  it('passes clean input on to the DTO rules and transforms', async () => {
    const value = (await pipe.transform(
      { ...payment, orderRef: 'r-😀' },
      { type: 'body', metatype: CreatePaymentRequest },
    )) as CreatePaymentRequest;
    expect(value).toBeInstanceOf(CreatePaymentRequest);
    expect(value.orderRef).toBe('r-😀');
    expect(await pipe.transform('plain', { type: 'param', metatype: String, data: 'id' })).toBe('plain');
  });

  it('leaves custom decorators (the merchant context, ...) alone', async () => {
    const context = { merchantId: 'm\u0000' };
    expect(await pipe.transform(context, { type: 'custom' })).toBe(context);
  });
});
