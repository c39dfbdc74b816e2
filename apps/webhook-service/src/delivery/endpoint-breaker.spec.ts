import { isEndpointFailure } from './endpoint-breaker.js';

describe('isEndpointFailure', () => {
  it.each([null, 500, 502, 503, 504, 408, 429])('counts %p against the endpoint', (statusCode) => {
    expect(isEndpointFailure({ statusCode })).toBe(true);
  });

  it.each([200, 204, 301, 400, 401, 404, 410, 422])(
    'takes %p as the endpoint answering (it closes the circuit)',
    (statusCode) => {
      expect(isEndpointFailure({ statusCode })).toBe(false);
    },
  );
});
