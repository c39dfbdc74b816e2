import {
  ALL_RETURN_CODES,
  describe as describeCode,
  ERROR_STATUS_CODES,
  isReturnCode,
  SUCCESS_CODE,
  withDescription,
  RETURN_CODES,
} from './codes.js';

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
    expect(ALL_RETURN_CODES).toHaveLength(22);
    expect(isReturnCode('BYRD200')).toBe(true);
    expect(isReturnCode('BYRD202')).toBe(false);
    expect(isReturnCode('toString')).toBe(false);
  });
});

describe('error statuses', () => {
  it('give every error status the codes its body may carry, each a table code', () => {
    expect(ERROR_STATUS_CODES[409]).toEqual(['BYRD409', 'BYRD201']);
    expect(ERROR_STATUS_CODES[429]).toEqual(['BYRD206']);
    expect(ERROR_STATUS_CODES[422]).toEqual(
      expect.arrayContaining(['BYRD205', 'BYRD230', 'BYRD231', 'BYRD240', 'BYRD900']),
    );
    expect(ERROR_STATUS_CODES[422]).not.toContain('BYRD200');
    for (const codes of Object.values(ERROR_STATUS_CODES)) expect(codes.every(isReturnCode)).toBe(true);
  });

  it('gives a response its code with the description of the table', () => {
    expect(withDescription(SUCCESS_CODE)).toEqual({
      code: 'BYRD200',
      description: 'Operation successfully completed',
    });
    expect(withDescription('BYRD205').description).toBe('Operation rejected');
  });
});
