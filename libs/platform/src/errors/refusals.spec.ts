import { ERROR_STATUS_CODES } from '@byrd/contracts';
import { httpStatusOf } from './api-error.js';
import { Refusal } from './refusals.js';

describe('Refusal', () => {
  it.each(Object.entries(Refusal))('%s answers a status whose error table lists its code', (_, refuse) => {
    const refusal = refuse('why');
    expect(refusal.message).toBe('why');
    expect(ERROR_STATUS_CODES[httpStatusOf(refusal.kind)]).toContain(refusal.code);
  });

  it('refuses a state the operation is not allowed in with BYRD205, 422', () => {
    const refusal = Refusal.notAllowed('A paid order cannot be canceled');
    expect([refusal.code, httpStatusOf(refusal.kind)]).toEqual(['BYRD205', 422]);
  });

  it('refuses past a limit of the merchant with BYRD205, 422, not kept under its key and with no time to wait', () => {
    const refusal = Refusal.limitReached('At most 100 webhook settings');
    expect([refusal.code, httpStatusOf(refusal.kind)]).toEqual(['BYRD205', 422]);
    expect(refusal.transient).toBe(true);
    expect(refusal.retryAfter).toBeUndefined();
  });
});
