import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const FAILURES = 3;
const COOLDOWN_MS = 10_000;

/**
 * README tells merchants to answer 4xx to the events they do not want, with `retryOn4xx: false`. Such
 * a receiver is up: its refusals must not open its circuit (docs/webhook-fairness.md), or the events
 * it wants wait a cool-down behind the ones it refused.
 */
describe('a receiver that refuses the events it does not want', () => {
  let h: WebhookHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await WebhookHarness.start({
      WEBHOOK_BREAKER_FAILURES: String(FAILURES),
      WEBHOOK_BREAKER_COOLDOWN_MS: String(COOLDOWN_MS),
    });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await h?.stop();
  });

  it('keeps its circuit closed: the order.paid it wants, after more refusals than the breaker counts, goes at once', async () => {
    receiver.answer = (request) =>
      String(request.json?.event).startsWith('transaction.')
        ? { status: 400, body: 'not wanted here' }
        : { status: 200, body: 'ok' };
    const setting = await h.subscribe({ url: receiver.url, retryOn4xx: false });
    for (let i = 0; i < FAILURES + 2; i++) await h.publish('transaction.payment.success', 'card');
    // Each refused once and ended (retryOn4xx: false).
    await h.waitForRow(
      `SELECT count(*) FILTER (WHERE status = 'failed' AND attempt_count = 1)::int AS n FROM webhooks
        WHERE settings_id = $1`,
      [setting.id],
      ([row]) => row.n === FAILURES + 2,
    );
    const [{ failing_since: failingSince }] = await h.rows(
      `SELECT failing_since FROM webhook_settings WHERE id = $1`,
      [setting.id],
    );

    const paid = await h.publish('order.paid', 'card');
    const published = performance.now();
    // Not held for the cool-down (10 s) of a circuit the refusals would have opened.
    await receiver.waitFor(
      (received) => received.some((r) => r.json?.event === 'order.paid'),
      2_500,
      'order.paid',
    );
    expect(receiver.received.find((r) => r.json?.event === 'order.paid')!.at - published).toBeLessThan(2_500);
    const [webhook] = await h.waitForRow(
      `SELECT status, attempt_count FROM webhooks WHERE event_id = $1`,
      [paid.id],
      ([w]) => w?.status === 'succeeded',
    );
    expect(webhook).toEqual({ status: 'succeeded', attempt_count: 1 });

    const metrics = await fetch(`${h.baseUrl}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^webhook_endpoint_circuits_open 0$/m);
    expect(metrics).not.toMatch(/^webhook_endpoint_circuit_changes_total\{to="open"\} [1-9]/m);
    // Nor is the endpoint failing for the held-webhooks sweep.
    expect(failingSince).toBeNull();
  });
});
