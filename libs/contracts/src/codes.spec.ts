import { ALL_RETURN_CODES, describe as describeCode, isReturnCode, RETURN_CODES } from './codes.js';

describe('return codes', () => {
  it('describes codes as published', () => {
    expect(describeCode('BYRD207')).toBe('Pending redirect');
    expect(describeCode('BYRD900')).toBe('Invalid input');
  });

  it('maps error codes to their HTTP status and keeps outcome codes in 2xx bodies', () => {
    expect(RETURN_CODES.BYRD900.httpStatus).toBe(400);
    expect(RETURN_CODES.BYRD901.httpStatus).toBe(404);
    expect(RETURN_CODES.BYRD231.httpStatus).toBe(422);
    expect(RETURN_CODES.BYRD999.httpStatus).toBe(500);
    expect(RETURN_CODES.BYRD205.httpStatus).toBeNull();
    expect(RETURN_CODES.BYRD203.status).toBe('TemporaryFailed');
  });

  it('recognises only table codes', () => {
    expect(ALL_RETURN_CODES).toHaveLength(21);
    expect(isReturnCode('BYRD200')).toBe(true);
    expect(isReturnCode('BYRD202')).toBe(false);
    expect(isReturnCode('toString')).toBe(false);
  });
});
