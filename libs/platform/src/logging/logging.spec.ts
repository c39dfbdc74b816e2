import { Writable } from 'node:stream';
import { QueryFailedError } from 'typeorm';
import { createLogger, serializeError } from './logging.js';

describe('log redaction', () => {
  function capture() {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    return { logger: createLogger('test', 'info', 'json', sink), output: () => lines.join('') };
  }

  it('never writes a card number, a CVV or an API key, wherever they sit', () => {
    const { logger, output } = capture();
    logger.info({ card: { number: '5448280000000007', cvv: '123' } }, 'payment');
    logger.info({ body: { Card: { number: '4242424242424242', cvv: '999' } } }, 'token');
    logger.info({ a: { b: { c: { d: { e: { card: { number: '4000000000003220' } } } } } } }, 'deep');
    logger.info({ number: '5105105105105100', cvv: 321 }, 'top level');
    logger.info({ req: { headers: { 'x-api-key': '6f1c2d4e-0000-4000-8000-000000000001' } } }, 'headers');
    logger.info(
      { headers: { authorization: 'Basic c2VjcmV0', 'x-api-key': '6f1c2d4e-0000-4000-8000-000000000002' } },
      'headers elsewhere',
    );
    logger.child({ payment: { pan: '4111111111111111' } }).info('child bindings');
    logger.info('interpolated %j', { card: { number: '4012888888881881' } });
    const circular: Record<string, unknown> = { card: { number: '4000056655665556' } };
    circular.self = circular;
    logger.info({ circular }, 'circular');

    const logged = output();
    expect(logged).not.toMatch(/5448280000000007|4242424242424242|4000000000003220|5105105105105100/);
    expect(logged).not.toMatch(/4111111111111111|4012888888881881|4000056655665556/);
    expect(logged).not.toMatch(/"cvv":"?\d+/);
    expect(logged).not.toMatch(/6f1c2d4e-0000-4000-8000-00000000000[12]/);
    expect(logged).not.toContain('c2VjcmV0');
    // Censored in place: the line still says what was there.
    for (const key of ['card', 'Card', 'number', 'cvv', 'pan', 'authorization']) {
      expect(logged).toContain(`"${key}":"[REDACTED]"`);
    }
  });

  it('writes a placeholder, never throws, for an object that cannot be serialised', () => {
    const { logger, output } = capture();
    const hostile = {
      toJSON() {
        throw new Error('no');
      },
    };
    expect(() => logger.info({ hostile }, 'hostile')).not.toThrow();
    expect(output()).toContain('"hostile":"[unable to serialize]"');
  });

  it("leaves the logged objects as they were: the caller's card is not censored", () => {
    const { logger } = capture();
    const payment = { card: { number: '5448280000000007' } };
    logger.info({ payment }, 'payment');
    expect(payment.card.number).toBe('5448280000000007');
  });
});

describe('error serialisation', () => {
  it("logs a failed SQL statement without its parameters or PostgreSQL's quoted values", () => {
    const driverError = Object.assign(new Error('duplicate key value violates unique constraint "u"'), {
      code: '23505',
      constraint: 'u',
      table: 'orders',
      detail: 'Key (email)=(ana@example.com) already exists.',
    });
    (driverError as unknown as { self: unknown }).self = driverError; // pg errors can be circular
    const error = new QueryFailedError(
      'INSERT INTO orders (email) VALUES ($1)',
      ['ana@example.com'],
      driverError,
    );
    const logged = JSON.stringify(serializeError(error));
    expect(logged).not.toContain('ana@example.com');
    expect(logged).toContain('INSERT INTO orders');
    expect(JSON.parse(logged)).toMatchObject({ code: '23505', constraint: 'u', table: 'orders' });
  });
});
