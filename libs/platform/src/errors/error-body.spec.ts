import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { ApiError, ErrorKind } from './api-error.js';
import { toErrorResponse } from './error-body.js';

describe('toErrorResponse', () => {
  it('maps domain errors to their status, code and description', () => {
    const answer = toErrorResponse(ApiError.invalidField('card.number', 'fails the Luhn check'), 'req-1');
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      code: 'BYRD900',
      description: 'Invalid input',
      message: 'card.number: fails the Luhn check',
      errors: [{ field: 'card.number', message: 'fails the Luhn check' }],
      requestId: 'req-1',
    });
    expect(
      toErrorResponse(new ApiError(ErrorKind.BusinessRule, 'too much', { code: 'BYRD231' }), 'r').status,
    ).toBe(422);
    expect(
      toErrorResponse(new ApiError(ErrorKind.RateLimited, 'slow down', { retryAfter: 3 }), 'r').headers,
    ).toEqual({
      'retry-after': '3',
    });
  });

  it('maps framework errors: unknown route 404, oversized body 413, malformed body 400', () => {
    expect(toErrorResponse(new NotFoundException('Cannot GET /x'), 'r')).toMatchObject({
      status: 404,
      body: { code: 'BYRD901', description: 'Resource not found', message: 'Cannot GET /x' },
    });
    expect(toErrorResponse(new PayloadTooLargeException(), 'r').status).toBe(413);
    expect(toErrorResponse(new BadRequestException('Unexpected end of JSON input'), 'r').body.code).toBe(
      'BYRD900',
    );
  });

  it('hides the details of unexpected failures behind BYRD999', () => {
    const answer = toErrorResponse(
      new TypeError('cannot read properties of undefined (secret internals)'),
      'req-9',
    );
    expect(answer.status).toBe(500);
    expect(answer.body.code).toBe('BYRD999');
    expect(JSON.stringify(answer.body)).not.toContain('secret internals');
  });
});
