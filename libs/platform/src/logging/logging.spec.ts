import { Writable } from 'node:stream';
import pino from 'pino';
import { QueryFailedError } from 'typeorm';
import { REDACT_PATHS, serializeError } from './logging.js';

describe('log redaction', () => {
  it('never writes a card number, a CVV or an API key, wherever they sit', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = pino({ redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } }, sink);

    logger.info({ card: { number: '5448280000000007', cvv: '123' } }, 'payment');
    logger.info({ body: { Card: { number: '4242424242424242', cvv: '999' } } }, 'token');
    logger.info({ request: { payment: { card: { number: '4000000000003220' } } } }, 'nested');
    logger.info({ req: { headers: { 'x-api-key': '6f1c2d4e-0000-4000-8000-000000000001' } } }, 'headers');

    const output = lines.join('');
    expect(output).not.toMatch(/5448280000000007|4242424242424242|4000000000003220/);
    expect(output).not.toMatch(/"cvv":"\d+"/);
    expect(output).not.toContain('6f1c2d4e-0000-4000-8000-000000000001');
    expect(output).toContain('[REDACTED]');
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
