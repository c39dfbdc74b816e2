import { randomUUID } from 'node:crypto';
import { ApiError, httpStatusOf } from '../errors/api-error.js';
import { GuidParam } from './guid-param.js';

function refusalOf(pipe: GuidParam, value: string): ApiError {
  try {
    pipe.transform(value);
  } catch (error) {
    if (error instanceof ApiError) return error;
  }
  throw new Error(`${value} was let through`);
}

describe('GuidParam', () => {
  it("passes a GUID on in the API's lowercase form, as a body's GUID is read", () => {
    const id = randomUUID();
    expect(GuidParam.notFound('Order').transform(id)).toBe(id);
    expect(GuidParam.notFound('Order').transform(id.toUpperCase())).toBe(id);
    expect(GuidParam.notFound('Order').transform(` ${id} `)).toBe(id);
  });

  it('answers anything else as not found, worded as a GUID that matches nothing', () => {
    const refusal = refusalOf(GuidParam.notFound('Order'), 'not-a-guid');
    expect([httpStatusOf(refusal.kind), refusal.code, refusal.message]).toEqual([
      404,
      'BYRD901',
      'Order not-a-guid was not found',
    ]);
  });

  it('or, where the contract says 400, as invalid input naming the parameter', () => {
    const refusal = refusalOf(GuidParam.invalid('tokenId'), '42');
    expect([httpStatusOf(refusal.kind), refusal.code, refusal.errors]).toEqual([
      400,
      'BYRD900',
      [{ field: 'tokenId', message: 'tokenId must be a GUID' }],
    ]);
  });
});
