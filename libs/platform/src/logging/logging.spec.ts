import { Writable } from 'node:stream';
import pino from 'pino';
import { REDACT_PATHS } from './logging.js';

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
