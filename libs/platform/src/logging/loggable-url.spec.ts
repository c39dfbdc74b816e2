import { loggableUrl } from './loggable-url.js';

const KEY = 'f7c5d6e8-9a0b-4c13-8d4e-5f6a7b8c9d0e';

describe('loggableUrl', () => {
  it.each([
    ['/api/v2/tokens/4111111111111111', '/api/v2/tokens/[REDACTED]'],
    ['/api/v2/tokens/4111%201111%201111%201111/x', '/api/v2/tokens/[REDACTED]/x'],
    ['/api/v2/tokens/6062821111111119', '/api/v2/tokens/[REDACTED]'],
    [
      '/api/v2/tokens?customReference=4111111111111111&page=2',
      '/api/v2/tokens?customReference=[REDACTED]&page=2',
    ],
    ['/api/v2/tokens?customReference=4111+1111+1111+1111', '/api/v2/tokens?customReference=[REDACTED]'],
    ['/api/v2/tokens?4111111111111111', '/api/v2/tokens?[REDACTED]'],
    ['/api/v2/tokens?4111111111111111=1', '/api/v2/tokens?[REDACTED]'],
    [`/api/v2/payment?checkoutKey=${KEY}`, '/api/v2/payment?checkoutKey=[REDACTED]'],
    [
      `/checkout/${KEY}?checkoutKey=${KEY}&orderId=${KEY}`,
      `/checkout/${KEY}?checkoutKey=[REDACTED]&orderId=${KEY}`,
    ],
    [
      '/x?api_key=abc&access_token=def&signature=ghi&sessionId=jkl',
      '/x?api_key=[REDACTED]&access_token=[REDACTED]&signature=[REDACTED]&sessionId=[REDACTED]',
    ],
  ])('censors %s', (url, logged) => expect(loggableUrl(url)).toBe(logged));

  it.each([
    '/api/v2/tokens',
    `/api/v2/transactions/${KEY}`,
    '/api/v2/transactions?orderRef=ORDER-2026-000123&page=1&pageSize=50',
    '/health/ready',
    '/3ds/authenticate/abc?',
    '/x?%E0%A4%A=1', // does not decode: kept as it is
  ])('keeps %s as it is', (url) => expect(loggableUrl(url)).toBe(url));
});
