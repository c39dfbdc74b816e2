// The payments benchmark's request (a frictionless card payment of a sandbox merchant) and its smoke
// test: one payment through each target before measuring.
import type { Load } from '../core/load.js';
import { requestJson } from '../core/stack.js';
import { fail, futureExpiry, note, step } from '../core/util.js';
import type { PaymentsStack } from './stack.js';
import type { Answered, Kind } from './windows.js';

export type PaymentRequest = Required<Pick<Load, 'method' | 'headers' | 'body' | 'uniqueIds'>>;

/** POST /api/v2/payment, card 5448280000000007 valid until a December three years ahead, "25.00" EUR. */
export function paymentRequest(apiKey: string, idempotencyKey: boolean): PaymentRequest {
  const body = {
    type: 'card',
    amount: '25.00',
    currency: 'EUR',
    orderRef: 'bench-payment',
    redirectUrl: 'https://shop.example.com/return',
    card: { number: '5448280000000007', expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' },
  };
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'x-api-key': apiKey,
  };
  if (idempotencyKey) headers['idempotency-key'] = 'bench-[<id>]';
  return { method: 'POST', headers, body: JSON.stringify(body), uniqueIds: idempotencyKey };
}

/** 201 BYRD200 Success from each target, or the run stops; each counts as an answered payment. */
export async function smokeTest(
  stack: PaymentsStack,
  direct: boolean,
  request: PaymentRequest,
  answered: Answered,
): Promise<void> {
  step('Smoke test');
  const targets: [string, Kind, string][] = [
    ['service via edge', 'service', `${stack.edge.url}/api/v2/payment`],
    ['bare via edge', 'bare', `${stack.edge.url}/bench-bare/api/v2/payment`],
  ];
  if (direct)
    targets.push(
      ['service direct', 'service', `${stack.payments.url}/api/v2/payment`],
      ['bare direct', 'bare', `${stack.bare.url}/api/v2/payment`],
    );
  for (const [name, kind, url] of targets) {
    const headers = request.uniqueIds
      ? { ...request.headers, 'idempotency-key': `bench-smoke-${name.replace(/ /g, '-')}` }
      : request.headers;
    const answer = await requestJson<{ code?: string; status?: string }>(url, {
      method: 'POST',
      headers,
      body: request.body,
    });
    if (answer.status !== 201 || answer.body?.code !== 'BYRD200' || answer.body?.status !== 'Success')
      fail(
        `${name}: POST ${url} answered ${answer.status} ${JSON.stringify(answer.body)}; expected 201 BYRD200 Success.`,
      );
    answered[kind].answered2xx++;
    note(`${name}: 201 ${answer.body.code} ${answer.body.status}`);
  }
}
