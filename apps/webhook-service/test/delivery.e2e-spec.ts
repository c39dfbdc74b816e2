import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { callService } from '@byrd/platform/testing';
import type { TransactionEventContent } from '@byrd/contracts';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const ATTEMPTS = `SELECT * FROM webhook_attempts WHERE webhook_id = $1 ORDER BY created_at`;

describe('fan-out and delivery', () => {
  let h: WebhookHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await WebhookHarness.start();
  });
  afterAll(() => h?.stop());
  beforeEach(async () => {
    await h.freshMerchant();
    receiver = await Receiver.start();
  });
  afterEach(() => receiver?.stop());

  /** The webhook of `event` once it was delivered. */
  const deliveredWebhookOf = async (event: { id: string }) =>
    (
      await h.waitForRow(
        `SELECT * FROM webhooks WHERE event_id = $1`,
        [event.id],
        ([w]) => w?.status === 'succeeded',
      )
    )[0];

  it('POSTs the API-FACTS body with the x-api-key credential and a valid Standard Webhooks signature', async () => {
    const settings = await h.subscribe({ url: receiver.url });
    const event = await h.publish('transaction.payment.success', 'card');
    await receiver.waitFor((r) => r.length === 1);
    const [webhook] = await h.webhooksOf(event.id);
    const [request] = receiver.received;

    expect(request.headers['x-api-key']).toBe(settings.credential.apiKey);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toBe(webhook.id);
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    const verified = new Webhook(settings.signingSecret).verify(
      request.body,
      request.headers as Record<string, string>,
    );
    expect(verified).toEqual(request.json);
    expect(() =>
      new Webhook(`whsec_${Buffer.from('another secret of 32 bytes......').toString('base64')}`).verify(
        request.body,
        request.headers as Record<string, string>,
      ),
    ).toThrow();

    const data = event.data as TransactionEventContent;
    expect(request.json).toEqual({
      id: webhook.id,
      event: 'transaction.payment.success',
      paymentMethod: 'card',
      settingsId: settings.id,
      attemptId: expect.any(String),
      createdAt: webhook.created_at.toISOString(),
      content: {
        transactionId: data.transactionId,
        orderId: data.orderId,
        orderRef: 'ref-1',
        status: 'Success',
        operationType: 'Payment',
        amount: '25.00',
        currency: 'EUR',
        code: 'BYRD200',
        description: 'Operation successfully completed',
      },
    });

    const [done] = await h.waitForRow(
      `SELECT * FROM webhooks WHERE id = $1`,
      [webhook.id],
      ([w]) => w.status === 'succeeded',
    );
    expect(done.sent_at).not.toBeNull();
    const attempts = await h.request('GET', `/api/v1/webhooks/${webhook.id}/attempts`);
    expect(attempts.status).toBe(200);
    expect(attempts.body.data).toEqual([
      {
        id: request.json.attemptId,
        webhookId: webhook.id,
        event: 'transaction.payment.success',
        paymentMethod: 'card',
        content: request.json,
        createdAt: expect.any(String),
        response: { statusCode: 200, content: 'ok' },
        settings: { url: receiver.url, credential: settings.credential },
        kind: 'scheduled',
        succeeded: true,
        durationMs: expect.any(Number),
        error: null,
      },
    ]);
  });

  it('sends basic credentials as an Authorization header', async () => {
    const settings = await h.subscribe({ url: receiver.url, credentialType: 'basic' });
    await h.publish('order.paid', 'mbway');
    await receiver.waitFor((r) => r.length === 1);
    const { username, password } = settings.credential;
    expect(receiver.received[0].headers.authorization).toBe(
      `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
    );
    expect(receiver.received[0].headers['x-api-key']).toBeUndefined();
    expect(
      new Webhook(settings.signingSecret).verify(
        receiver.received[0].body,
        receiver.received[0].headers as never,
      ),
    ).toBeTruthy();
  });

  it('creates one webhook per matching setting: event and payment-method filters, empty = all, deleted excluded', async () => {
    const all = await h.subscribe({ url: `${receiver.url}?all` });
    const paid = await h.subscribe({ url: `${receiver.url}?paid`, events: ['order.paid'] });
    const mbway = await h.subscribe({ url: `${receiver.url}?mbway`, paymentMethods: ['mbway'] });
    const both = await h.subscribe({
      url: `${receiver.url}?both`,
      events: ['transaction.payment.success', 'chargeback.created'],
      paymentMethods: ['card'],
    });
    const gone = await h.subscribe({ url: `${receiver.url}?gone` });
    await h.request('DELETE', `/api/v1/settings/${gone.id}`);
    const otherMerchant = await h.env.createMerchant('Someone else');
    await h.subscribe({ url: `${receiver.url}?other` }, otherMerchant.apiKey);

    const cases = [
      [await h.publish('order.paid', 'card'), [all, paid]],
      [await h.publish('order.paid', 'mbway'), [all, paid, mbway]],
      [await h.publish('transaction.payment.success', 'card'), [all, both]],
      [await h.publish('transaction.payment.success', 'mbway'), [all, mbway]],
      [await h.publish('chargeback.created', 'card'), [all, both]],
      // No payment method concerned (e.g. order.created): payment-method filters do not exclude it.
      [await h.publish('order.created', null), [all, mbway]],
    ] as const;
    const expected = cases.reduce((n, [, settings]) => n + settings.length, 0);
    await receiver.waitFor((r) => r.length === expected, 15_000, `${expected} deliveries`);
    for (const [event, settings] of cases) {
      const rows = await h.webhooksOf(event.id);
      expect({
        event: event.type,
        pm: event.paymentMethod,
        settings: rows.map((r) => r.settings_id).sort(),
      }).toEqual({
        event: event.type,
        pm: event.paymentMethod,
        settings: settings.map((s) => s.id).sort(),
      });
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received).toHaveLength(expected);
    expect(receiver.received.filter((r) => r.path.endsWith('?gone') || r.path.endsWith('?other'))).toEqual(
      [],
    );
  });

  it('holds the webhook of a setting whose secrets cannot be opened, unsent and unrecorded, and delivers the others', async () => {
    const good = await h.subscribe({ url: `${receiver.url}?good` });
    const broken = await h.subscribe({ url: `${receiver.url}?broken` });
    // As if sealed with a key that is no longer in WEBHOOK_SECRETS_KEYS.
    await h.rows(`UPDATE webhook_settings SET signing_secret = 'v1:00000000:AAAA' WHERE id = $1`, [
      broken.id,
    ]);
    const event = await h.publish('order.paid', 'card');
    await receiver.waitFor((r) => r.length === 1);
    const unsent = async () =>
      /^webhook_attempts_unsent_total\{reason="secrets"\} (\d+)/m.exec(
        await (await fetch(`${h.baseUrl}/metrics`)).text(),
      )?.[1];
    const deadline = Date.now() + 10_000;
    while (!(await unsent()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(Number(await unsent())).toBeGreaterThan(0);
    // Not an attempt (none recorded, none used): it waits for its key (key-removed-delivery.e2e-spec.ts).
    const [held] = (await h.webhooksOf(event.id)).filter((w) => w.settings_id === broken.id);
    expect(held).toMatchObject({ status: 'pending', attempt_count: 0 });
    expect(await h.rows(`SELECT id FROM webhook_attempts WHERE webhook_id = $1`, [held.id])).toEqual([]);
    expect(receiver.received.map((r) => r.path)).toEqual([expect.stringMatching(/\?good$/)]);
    expect((await h.webhooksOf(event.id)).map((w) => w.settings_id).sort()).toEqual(
      [good.id, broken.id].sort(),
    );
  });

  it('a redelivered event creates no second webhook', async () => {
    await h.subscribe({ url: receiver.url });
    const event = await h.publish('order.paid', 'card');
    await receiver.waitFor((r) => r.length === 1);
    // Same envelope again under a new JetStream msgID: the inbox makes it a no-op.
    await h.env.nats.js.publish(h.env.nats.subject(event.type), JSON.stringify(event), {
      msgID: randomUUID(),
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(await h.webhooksOf(event.id)).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);
  });

  it('lengthens the wait for Retry-After and 429, never shortens it nor waits past the hour', async () => {
    receiver.answer = (_, i) =>
      i === 0
        ? { status: 503, headers: { 'retry-after': '5' } }
        : i === 1
          ? { status: 429, headers: { 'retry-after': '0' } }
          : { status: 200 };
    await h.subscribe({ url: receiver.url });
    const event = await h.publish('order.paid', 'card');
    await receiver.waitFor((r) => r.length === 3, 10_000);
    const [webhook] = await h.webhooksOf(event.id);
    const attempts = await h.waitForRow(ATTEMPTS, [webhook.id], (rows) => rows.length === 3);
    // A retry minute lasts 10 ms here: the schedule alone would wait 10 ms, then 20 ms; the 5 s the
    // receiver asked is past the schedule's hour (600 ms here), so it waits that hour. (Far past it: a
    // loaded machine may well send the retry 400 ms late, never 4 s.)
    expect(attempts.map((a) => [a.number, a.status_code, a.retry_delay_ms])).toEqual([
      [1, 503, 600],
      [2, 429, 40],
      [3, 200, null],
    ]);
    const [first, second] = receiver.received;
    expect(second.at - first.at).toBeGreaterThanOrEqual(600);
    expect(second.at - first.at).toBeLessThan(5_000);
  });

  it('counts a timeout, a redirect and a refused connection as failed attempts, and keeps 20 KB of an answer', async () => {
    receiver.answer = (_, i) =>
      i === 0
        ? { hold: true }
        : i === 1
          ? { status: 302, headers: { location: `${receiver.url}/elsewhere` } }
          : { status: 200, body: 'x'.repeat(50_000) };
    await h.subscribe({ url: receiver.url });
    const event = await h.publish('order.paid', 'card');
    const webhook = await deliveredWebhookOf(event);
    const attempts = await h.rows(ATTEMPTS, [webhook.id]);
    expect(attempts.map((a) => [a.status_code, a.succeeded, a.error])).toEqual([
      [null, false, 'No answer within 1000 ms'],
      [302, false, null],
      [200, true, null],
    ]);
    expect(attempts[0].duration_ms).toBeGreaterThanOrEqual(990);
    expect(attempts[2].response_body).toHaveLength(20 * 1024);
    expect(receiver.received.map((r) => r.path)).toEqual(['/hooks', '/hooks', '/hooks']);

    const closed = await Receiver.start();
    await closed.stop();
    const dead = await h.subscribe({ url: closed.url });
    const second = await h.publish('order.refunded', 'card');
    const [pending] = await h.waitForRow(
      `SELECT w.* FROM webhooks w WHERE event_id = $1 AND settings_id = $2`,
      [second.id, dead.id],
      ([w]) => w?.attempt_count >= 2,
    );
    const refused = await h.rows(ATTEMPTS, [pending.id]);
    expect(refused[0]).toMatchObject({ status_code: null, succeeded: false });
    expect(refused[0].error).toContain('ECONNREFUSED');

    // Deleting the setting stops its retries.
    await h.request('DELETE', `/api/v1/settings/${dead.id}`);
    const [canceled] = await h.rows(`SELECT * FROM webhooks WHERE id = $1`, [pending.id]);
    expect(canceled).toMatchObject({ status: 'canceled', next_attempt_at: null });
    const count = (await h.rows(ATTEMPTS, [pending.id])).length;
    await new Promise((r) => setTimeout(r, 300));
    expect((await h.rows(ATTEMPTS, [pending.id])).length).toBeLessThanOrEqual(count + 1); // at most the one in flight
  });

  it('takes a 2xx whose body is slow or cut short as delivered: sent once, recorded with its status, the part of the body that came and why it stopped', async () => {
    let unfinished: 'hold' | 'destroy' = 'hold';
    receiver.answer = () => ({ status: 200, body: 'accepted, and then', unfinished });
    await h.subscribe({ url: receiver.url });
    // The body never ends (past WEBHOOK_TIMEOUT_MS, 1 s here), then a connection closed mid-body.
    const slow = await deliveredWebhookOf(await h.publish('order.paid', 'card'));
    unfinished = 'destroy';
    const cut = await deliveredWebhookOf(await h.publish('order.paid', 'card'));

    // Past a lease (2 s here) and many retry minutes (10 ms here): neither went out again.
    await new Promise((r) => setTimeout(r, 2_500));
    expect([receiver.of(slow.id).length, receiver.of(cut.id).length]).toEqual([1, 1]);
    const attempts = [...(await h.rows(ATTEMPTS, [slow.id])), ...(await h.rows(ATTEMPTS, [cut.id]))];
    expect(attempts.map((a) => [a.status_code, a.succeeded, a.response_body, a.error])).toEqual([
      [200, true, 'accepted, and then', "The answer's body did not end within 1000 ms"],
      [200, true, 'accepted, and then', expect.stringMatching(/^The answer's body was cut: /)],
    ]);
    const listed = await h.request('GET', `/api/v1/webhooks/${slow.id}/attempts`);
    expect(listed.body.data[0]).toMatchObject({
      response: { statusCode: 200, content: 'accepted, and then' },
      succeeded: true,
    });
  });

  it('records an answer holding a NUL byte (PostgreSQL refuses it) with U+FFFD in its place, and sends it once', async () => {
    receiver.answer = () => ({ status: 200, body: 'ok\u0000done' });
    await h.subscribe({ url: receiver.url });
    const event = await h.publish('order.paid', 'card');
    const webhook = await deliveredWebhookOf(event);
    // A resend is recorded by another statement.
    expect((await h.request('POST', '/api/v1/webhooks/resend', { ids: [webhook.id] })).status).toBe(202);
    const attempts = await h.waitForRow(ATTEMPTS, [webhook.id], (rows) => rows.length === 2);
    expect(attempts.map((a) => [a.kind, a.succeeded, a.response_body])).toEqual([
      ['scheduled', true, 'ok\uFFFDdone'],
      ['resend', true, 'ok\uFFFDdone'],
    ]);
    // Past a lease (WEBHOOK_LEASE_MS, 2 s here) nothing was sent again: both attempts were recorded.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(receiver.of(webhook.id)).toHaveLength(2);
    expect(await h.rows(`SELECT id FROM webhook_resends WHERE webhook_id = $1`, [webhook.id])).toEqual([]);
    expect(await h.rows(ATTEMPTS, [webhook.id])).toHaveLength(2);
  });

  it('sends nothing more for a deleted setting: a webhook its event left after the delete is canceled, a resend refused', async () => {
    const settings = await h.subscribe({ url: receiver.url });
    const event = await h.publish('order.paid', 'card');
    const delivered = await deliveredWebhookOf(event);
    expect((await h.request('DELETE', `/api/v1/settings/${settings.id}`)).status).toBe(200);
    // The race by hand: a fan-out that read the setting before the delete committed after its cancel
    // step, leaving a pending webhook behind.
    const [raced] = await h.rows(
      `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, content,
         occurred_at, status, next_attempt_at, created_at)
       VALUES (gen_random_uuid(), $1, $2, gen_random_uuid(), 'order.paid', 'card', '{"orderId":"x"}', now(),
         'pending', now(), now())
       RETURNING id`,
      [h.merchant.merchantId, settings.id],
    );
    // Its history stays readable, but a resend of it is answered as not found, as nothing would be
    // sent: not to the deleted setting's URL, nor to another one (its secret is no longer in use).
    expect((await h.request('GET', `/api/v1/webhooks/${delivered.id}/attempts`)).status).toBe(200);
    for (const elsewhere of [{}, { url: `${receiver.url}?elsewhere` }])
      expect(
        await h.request('POST', '/api/v1/webhooks/resend', { ids: [delivered.id], ...elsewhere }),
      ).toMatchObject({ status: 202, body: { data: { resent: [], notFound: [delivered.id] } } });
    expect(await h.rows(`SELECT id FROM webhook_resends WHERE webhook_id = $1`, [delivered.id])).toEqual([]);
    // The same race for a resend: one asked before the delete committed is dropped when claimed.
    await h.rows(
      `INSERT INTO webhook_resends (id, webhook_id, settings_id, url) VALUES (gen_random_uuid(), $1, $2, NULL)`,
      [delivered.id, settings.id],
    );

    await h.waitForRow(
      `SELECT * FROM webhooks WHERE id = $1`,
      [raced.id],
      ([w]) => w.status === 'canceled' && w.next_attempt_at === null && w.finished_at !== null,
    );
    await h.waitForRow(
      `SELECT id FROM webhook_resends WHERE webhook_id = $1`,
      [delivered.id],
      (rows) => !rows.length,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(1); // the delivery before the delete, nothing after
    expect(await h.rows(ATTEMPTS, [raced.id])).toEqual([]);
    expect(await h.rows(ATTEMPTS, [delivered.id])).toHaveLength(1);
  });

  it('records a 2xx that came back after the setting was deleted mid-attempt: the receiver has the webhook', async () => {
    let letAnswer!: () => void;
    const released = new Promise<void>((resolve) => (letAnswer = resolve));
    receiver.answer = () => ({ status: 200, after: released });
    const settings = await h.subscribe({ url: receiver.url });
    const event = await h.publish('order.paid', 'card');
    await receiver.waitFor((r) => r.length === 1);
    // The receiver holds its answer; the delete cancels the webhook meanwhile.
    expect((await h.request('DELETE', `/api/v1/settings/${settings.id}`)).status).toBe(200);
    const [webhook] = await h.webhooksOf(event.id);
    expect(webhook.status).toBe('canceled');
    letAnswer();

    await h.waitForRow(ATTEMPTS, [webhook.id], ([attempt]) => attempt?.succeeded === true);
    const [row] = await h.webhooksOf(event.id);
    expect(row).toMatchObject({ status: 'succeeded', next_attempt_at: null, lease_token: null });
    const listed = await h.request('GET', '/api/v1/webhooks');
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: webhook.id, sentAt: row.sent_at.toISOString() }),
    ]);
    expect(receiver.received).toHaveLength(1);
  });

  it('sends a resend that a replica of the version before inserted without its endpoint', async () => {
    // While a deploy rolls out, old replicas insert resends as they always did (no settings_id).
    await h.subscribe({ url: receiver.url });
    const event = await h.publish('order.paid', 'card');
    const delivered = await deliveredWebhookOf(event);
    await h.rows(
      `INSERT INTO webhook_resends (id, webhook_id, url) VALUES (gen_random_uuid(), $1, NULL) RETURNING id`,
      [delivered.id],
    );
    await h.waitForRow(ATTEMPTS, [delivered.id], (rows) => rows.length === 2);
    expect(await h.rows(`SELECT id FROM webhook_resends WHERE webhook_id = $1`, [delivered.id])).toEqual([]);
  });

  it('counts an attempt whose worker died before recording it: the 51st ends the webhook failed, sent no more', async () => {
    await h.subscribe({ url: receiver.url });
    const delivered = await deliveredWebhookOf(await h.publish('order.paid', 'card'));
    const sent = receiver.of(delivered.id).length;
    // As a worker leaves its 51st attempt when killed after sending it: started in the row, its lease over.
    const lostId = randomUUID();
    await h.rows(
      `UPDATE webhooks SET status = 'pending', attempt_count = 50, sent_at = NULL, finished_at = NULL,
         open_attempt_id = $2, open_attempt_at = now() - interval '3 seconds', lease_token = gen_random_uuid(),
         lease_until = now() - interval '1 second', next_attempt_at = now() - interval '3 seconds'
       WHERE id = $1`,
      [delivered.id, lostId],
    );
    const [failed] = await h.waitForRow(
      `SELECT * FROM webhooks WHERE id = $1`,
      [delivered.id],
      ([w]) => w.status !== 'pending',
    );
    expect(failed).toMatchObject({
      status: 'failed',
      attempt_count: 51,
      next_attempt_at: null,
      open_attempt_id: null,
    });
    const [lost] = await h.rows(`SELECT * FROM webhook_attempts WHERE id = $1`, [lostId]);
    expect(lost).toMatchObject({ number: 51, status_code: null, succeeded: false, retry_delay_ms: null });
    expect(lost.error).toContain('No outcome recorded');
    // Inspectable as any attempt: what was sent (its body as its worker built it), no answer.
    const listed = await h.request('GET', `/api/v1/webhooks/${delivered.id}/attempts`);
    expect(listed.status).toBe(200);
    const sentFirst = receiver.of(delivered.id)[0].json;
    expect(listed.body.data.find((a: { id: string }) => a.id === lostId)).toMatchObject({
      content: { ...sentFirst, attemptId: lostId },
      response: null,
      succeeded: false,
      error: expect.stringContaining('No outcome recorded'),
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.of(delivered.id)).toHaveLength(sent);
  });

  it('counts an open attempt that was recorded after all once, and sends the next as usual', async () => {
    // A replica of the release before took the row over and recorded its attempt, leaving the open
    // attempt of the one it took it from, which that one also recorded late.
    await h.subscribe({ url: receiver.url });
    const delivered = await deliveredWebhookOf(await h.publish('order.paid', 'card'));
    const [recorded] = await h.rows(`SELECT id FROM webhook_attempts WHERE webhook_id = $1`, [delivered.id]);
    await h.rows(
      `UPDATE webhooks SET status = 'pending', sent_at = NULL, finished_at = NULL, open_attempt_id = $2,
         open_attempt_at = now() - interval '3 seconds', lease_token = gen_random_uuid(),
         lease_until = now() - interval '1 second', next_attempt_at = now() - interval '3 seconds'
       WHERE id = $1`,
      [delivered.id, recorded.id],
    );
    const [done] = await h.waitForRow(
      `SELECT * FROM webhooks WHERE id = $1`,
      [delivered.id],
      ([w]) => w.status !== 'pending',
    );
    expect(done).toMatchObject({ status: 'succeeded', attempt_count: 2, open_attempt_id: null });
    const attempts = await h.rows(
      `SELECT number, error FROM webhook_attempts WHERE webhook_id = $1 ORDER BY number`,
      [delivered.id],
    );
    expect(attempts).toEqual([
      { number: 1, error: null },
      { number: 2, error: null },
    ]);
  });

  it("finds work another replica left due after this replica's clock stepped back an hour (NTP, a resumed VM)", async () => {
    await h.subscribe({ url: receiver.url });
    const event = await h.publish('order.paid', 'card');
    const delivered = await deliveredWebhookOf(event);
    const wallClock = Date.now.bind(Date);
    const stepped = jest.spyOn(Date, 'now').mockImplementation(() => wallClock() - 3_600_000);
    try {
      // A resend another replica queued: only this replica's discovery of due work can find it.
      await h.rows(`INSERT INTO webhook_resends (id, webhook_id, url) VALUES (gen_random_uuid(), $1, NULL)`, [
        delivered.id,
      ]);
      await h.waitForRow(ATTEMPTS, [delivered.id], (rows) => rows.length === 2);
    } finally {
      stepped.mockRestore();
    }
  });

  it('vets the address again at delivery: a host that now resolves to loopback is not connected to', async () => {
    const settings = await h.subscribe({ url: receiver.url });
    // As if the name's DNS answer changed after the check at creation (DNS rebinding).
    const port = new URL(receiver.url).port;
    await h.db.query(`UPDATE webhook_settings SET url = $1 WHERE id = $2`, [
      `http://localhost:${port}/hooks`,
      settings.id,
    ]);
    const event = await h.publish('order.paid', 'card');
    const [webhook] = await h.waitForRow(
      `SELECT * FROM webhooks WHERE event_id = $1`,
      [event.id],
      ([w]) => w?.attempt_count >= 1,
    );
    const [attempt] = await h.rows(ATTEMPTS, [webhook.id]);
    expect(attempt).toMatchObject({ status_code: null, succeeded: false });
    expect(attempt.error).toMatch(/localhost resolves to (127\.0\.0\.1|::1) is a loopback address/);
    expect(receiver.received).toEqual([]);
    await h.request('DELETE', `/api/v1/settings/${settings.id}`);
  });

  it('resends on request: an extra attempt with the same webhook-id, to the setting or to another URL', async () => {
    const settings = await h.subscribe({ url: receiver.url });
    const event = await h.publish('order.paid', 'card');
    await receiver.waitFor((r) => r.length === 1);
    const webhook = await deliveredWebhookOf(event);
    const unknown = randomUUID();

    const resent = await h.request('POST', '/api/v1/webhooks/resend', { Ids: [webhook.id, unknown] });
    expect(resent).toMatchObject({
      status: 202,
      body: { data: { resent: [webhook.id], notFound: [unknown] } },
    });
    await receiver.waitFor((r) => r.length === 2);
    const [first, again] = receiver.received;
    expect(again.headers['webhook-id']).toBe(webhook.id);
    expect(again.json.attemptId).not.toBe(first.json.attemptId);
    expect(new Webhook(settings.signingSecret).verify(again.body, again.headers as never)).toBeTruthy();

    const elsewhere = await Receiver.start();
    try {
      const moved = await h.request('POST', '/api/v1/webhooks/resend', {
        ids: [webhook.id],
        Url: elsewhere.url,
      });
      expect(moved.status).toBe(202);
      await elsewhere.waitFor((r) => r.length === 1);
      expect(elsewhere.received[0].headers['webhook-id']).toBe(webhook.id);
    } finally {
      await elsewhere.stop();
    }
    const attempts = await h.waitForRow(ATTEMPTS, [webhook.id], (rows) => rows.length === 3);
    expect(attempts.map((a) => [a.kind, a.number])).toEqual([
      ['scheduled', 1],
      ['resend', null],
      ['resend', null],
    ]);
    const listed = await h.request('GET', `/api/v1/webhooks/${webhook.id}/attempts`);
    expect(
      listed.body.data.map((a: { kind: string; settings: { url: string } }) => [a.kind, a.settings.url]),
    ).toEqual([
      ['resend', elsewhere.url],
      ['resend', receiver.url],
      ['scheduled', receiver.url],
    ]);

    const refused = await h.request('POST', '/api/v1/webhooks/resend', {
      ids: [webhook.id],
      url: 'http://10.1.2.3/',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].field).toBe('url');
    const invalid = await h.request('POST', '/api/v1/webhooks/resend', { ids: ['nope'] });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0].field).toMatch(/^ids/);
    const other = await h.env.createMerchant('Other');
    const foreign = await callService(h.baseUrl, other.apiKey, 'POST', '/api/v1/webhooks/resend', {
      ids: [webhook.id],
    });
    expect(foreign.body).toEqual({ data: { resent: [], notFound: [webhook.id] } });
    expect(
      (await callService(h.baseUrl, other.apiKey, 'GET', `/api/v1/webhooks/${webhook.id}/attempts`)).status,
    ).toBe(404);
  });

  it('pages webhooks most recent first with the paging headers, filtered by referenceId', async () => {
    await h.subscribe({ url: receiver.url });
    const orderId = randomUUID();
    const published = [];
    for (let i = 0; i < 25; i++)
      published.push(await h.publish('order.paid', 'card', i % 5 === 0 ? { orderId } : {}));
    await h.waitForRow(
      `SELECT count(*)::int AS n FROM webhooks WHERE merchant_id = $1`,
      [h.merchant.merchantId],
      ([r]) => r.n === 25,
    );

    const page2 = await h.request('GET', '/api/v1/webhooks', undefined, {
      'x-page': '2',
      'x-page-size': '10',
    });
    expect(page2.status).toBe(200);
    expect(
      Object.fromEntries(
        ['x-current-page', 'x-page-size', 'x-page-count', 'x-total-item-count'].map((n) => [
          n,
          page2.headers.get(n),
        ]),
      ),
    ).toEqual({
      'x-current-page': '2',
      'x-page-size': '10',
      'x-page-count': '3',
      'x-total-item-count': '25',
    });
    expect(page2.body.data).toHaveLength(10);
    const all = await h.request('GET', '/api/v1/webhooks', undefined, { 'x-page-size': '100' });
    const times = all.body.data.map((w: { createdAt: string }) => Date.parse(w.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(all.body.data[0].referenceIds[0]).toBe((published[24].data as { orderId: string }).orderId);
    // Ids, not whole records: deliveries (sentAt) go on between the two reads.
    const ids = (data: { id: string }[]) => data.map((w) => w.id);
    expect(ids(page2.body.data)).toEqual(ids(all.body.data.slice(10, 20)));
    expect(all.body.data[0]).toMatchObject({ event: 'order.paid', paymentMethod: 'card' });
    expect(Object.keys(all.body.data[0]).sort()).toEqual([
      'createdAt',
      'event',
      'id',
      'paymentMethod',
      'referenceIds',
      'sentAt',
      'settingsId',
    ]);

    const defaults = await h.request('GET', '/api/v1/webhooks');
    expect([
      defaults.headers.get('x-current-page'),
      defaults.headers.get('x-page-size'),
      defaults.headers.get('x-page-count'),
    ]).toEqual(['1', '20', '2']);
    expect(defaults.body.data).toHaveLength(20);

    const byOrder = await h.request('GET', `/api/v1/webhooks?referenceId=${orderId}`);
    expect(byOrder.headers.get('x-total-item-count')).toBe('5');
    expect(byOrder.body.data.every((w: { referenceIds: string[] }) => w.referenceIds.includes(orderId))).toBe(
      true,
    );
    // The order id as a .NET client may send it: uppercase. Ids are stored lowercase.
    const upper = await h.request('GET', `/api/v1/webhooks?referenceId=${orderId.toUpperCase()}`);
    expect(upper.headers.get('x-total-item-count')).toBe('5');
    expect(upper.body.data.map((w: { id: string }) => w.id)).toEqual(
      byOrder.body.data.map((w: { id: string }) => w.id),
    );
    const beyond = await h.request('GET', '/api/v1/webhooks', undefined, { 'x-page': '9' });
    expect(beyond.body.data).toEqual([]);
    expect(beyond.headers.get('x-total-item-count')).toBe('25');

    const capped = await h.request('GET', '/api/v1/webhooks', undefined, { 'x-page-size': '500' });
    expect(capped.headers.get('x-page-size')).toBe('100');
    for (const [name, value] of [
      ['x-page', 'abc'],
      ['x-page', '0'],
      ['x-page-size', '-5'],
      ['x-page-size', '1.5'],
    ]) {
      const bad = await h.request('GET', '/api/v1/webhooks', undefined, { [name]: value });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: 'BYRD900', errors: [{ field: name }] });
    }
    const other = await h.env.createMerchant('Nobody');
    const none = await callService(h.baseUrl, other.apiKey, 'GET', '/api/v1/webhooks');
    expect(none.body).toEqual({ data: [] });
    expect(none.headers.get('x-total-item-count')).toBe('0');

    // Attempts page the same way.
    const id = all.body.data[0].id;
    await h.waitForRow(`SELECT * FROM webhooks WHERE id = $1`, [id], ([w]) => w.status === 'succeeded');
    // One resend after the other: a second asked while the first waits would not be queued.
    await h.request('POST', '/api/v1/webhooks/resend', { ids: [id] });
    await h.waitForRow(ATTEMPTS, [id], (rows) => rows.length === 2);
    await h.waitForRow(`SELECT id FROM webhook_resends WHERE webhook_id = $1`, [id], (rows) => !rows.length);
    await h.request('POST', '/api/v1/webhooks/resend', { ids: [id] });
    await h.waitForRow(ATTEMPTS, [id], (rows) => rows.length === 3);
    const attempts = await h.request('GET', `/api/v1/webhooks/${id}/attempts`, undefined, {
      'x-page-size': '2',
      'x-page': '2',
    });
    expect(attempts.body.data).toHaveLength(1);
    expect(attempts.body.data[0].kind).toBe('scheduled');
    expect([attempts.headers.get('x-page-count'), attempts.headers.get('x-total-item-count')]).toEqual([
      '2',
      '3',
    ]);
  });

  it('counts attempts and outcomes in /metrics', async () => {
    const metrics = await callService(h.baseUrl, '', 'GET', '/metrics');
    const value = (line: string) =>
      Number(new RegExp(`^${line.replace(/[{}]/g, '\\$&')} (\\d+)`, 'm').exec(metrics.body)?.[1] ?? NaN);
    expect(value('webhook_attempts_total{kind="scheduled",result="success"}')).toBeGreaterThan(10);
    expect(value('webhook_attempts_total{kind="scheduled",result="failure"}')).toBeGreaterThan(3);
    expect(value('webhook_attempts_total{kind="resend",result="success"}')).toBeGreaterThanOrEqual(2);
    expect(value('webhook_deliveries_total{outcome="succeeded"}')).toBeGreaterThan(10);
    expect(value('webhook_delivery_latency_seconds_count')).toBeGreaterThan(10);
    expect(metrics.body).toMatch(/^webhook_due_queue_depth \d+$/m);
  });
});
