import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  callService,
  freePort,
  futureExpiry,
  startServiceProcess,
  TestEnvironment,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';
import { PAYMENTS_MAIN, startOrdersAndPayments } from './migrated-env.js';

const MASTER_CHALLENGE = '5555341244441115';
const CHECK_LEASE_MS = 3_000;
const RECOVERY_AFTER_MS = 3_000;

/**
 * Two payments replicas as processes (`node dist/main.js`) on one database: a challenge code
 * submitted to both at once is checked with the issuer once; and a replica killed (kill -9) after it
 * claimed the check, before it recorded the outcome, leaves a challenge the shopper can still
 * finish on the other replica once the claim has run out (THREE_DS_CHECK_LEASE_MS); and a replica
 * killed after it committed the answered challenge's payment in flight, before the acquirer had it,
 * leaves a payment the other replica finishes (the acquirer recovery), not one the shopper must
 * start again.
 */
describe('3DS challenge code checks across replicas and kill -9', () => {
  let env: TestEnvironment;
  let merchant: TestMerchant;
  let paymentsVars: Record<string, string>;
  let orders: ServiceProcess;
  let replicas: ServiceProcess[] = [];
  let db: pg.Client;

  beforeAll(async () => {
    env = await TestEnvironment.create();
    ({
      orders,
      payments: replicas,
      paymentsVars,
    } = await startOrdersAndPayments(env, {
      orders: { LOG_LEVEL: 'warn' },
      payments: {
        PUBLIC_BASE_URL: 'http://127.0.0.1:1',
        LOG_LEVEL: 'warn',
        // One key for all replicas: the card sealed by one is opened by the other.
        CARD_SEAL_KEY: randomBytes(32).toString('base64'),
        THREE_DS_CHECK_LEASE_MS: String(CHECK_LEASE_MS),
        ACQUIRER_TIMEOUT_MS: '2000',
        ACQUIRER_RECOVERY_AFTER_MS: String(RECOVERY_AFTER_MS),
        ACQUIRER_RECOVERY_SWEEP_MS: '200',
      },
      paymentReplicas: 2,
    }));
    db = new pg.Client({ connectionString: paymentsVars.DATABASE_URL });
    await db.connect();
    merchant = await env.createMerchant('Challenge Shop');
  });

  afterAll(async () => {
    for (const service of [orders, ...replicas]) service?.child.kill('SIGKILL');
    await db?.end();
    await env?.cleanup();
  });

  /** A challenge payment (BYRD207) created on `base`, preAuth and auth done: its challenge id. */
  async function challenge(base: string, orderId?: string) {
    const created = await callService(base, merchant.apiKey, 'POST', '/api/v2/payment', {
      ...(orderId ? { orderId } : {}),
      type: 'card',
      amount: '25.00',
      currency: 'EUR',
      orderRef: `crash-${randomUUID().slice(0, 8)}`,
      redirectUrl: 'https://shop.example.com/return',
      card: { number: MASTER_CHALLENGE, expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' },
    });
    expect(created.body.code).toBe('BYRD207');
    const id = created.body.threeDSecure.id as string;
    const browser = { browser: { userAgent: 'test', language: 'en-US' } };
    expect((await callService(base, '', 'POST', `/3ds/api/v2/${id}/preAuth`, browser)).status).toBe(200);
    const auth = await callService(base, '', 'POST', `/3ds/api/v1/${id}/auth`, {});
    return {
      id,
      transactionId: created.body.transactionId as string,
      challengeId: auth.body.data.challengeId as string,
    };
  }

  /** The shopper's code, posted to the challenge page's form on `base`. */
  async function submit(base: string, c: { id: string; challengeId: string }, otp = '1234') {
    const response = await fetch(`${base}/3ds/acs/challenge/${c.challengeId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ threeDSServerTransID: c.id, otp, action: 'submit' }).toString(),
    });
    const text = await response.text();
    const cres = /name="cres" value="([^"]+)"/.exec(text)?.[1];
    return {
      status: response.status,
      transStatus: cres ? JSON.parse(Buffer.from(cres, 'base64url').toString()).transStatus : null,
    };
  }

  /**
   * Submits the code to `doomed` while our own session holds `hold`, waits until that replica's
   * statement like `blockedOn` waits for the lock, runs `beforeKill`, then kills the replica (kill -9)
   * there: its waiting statement is ended with it, and the submission gets no answer.
   */
  async function killWhileBlocked(
    doomed: ServiceProcess,
    c: { id: string; challengeId: string },
    step: { hold: [string, unknown[]]; blockedOn: string; what: string; beforeKill: () => Promise<void> },
  ) {
    const ours = new pg.Client({ connectionString: paymentsVars.DATABASE_URL });
    await ours.connect();
    try {
      const ourPids = [
        (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid,
        (await ours.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid,
      ];
      await ours.query('BEGIN');
      await ours.query(...step.hold);
      const cutOff = submit(doomed.url, c).then(
        (answer) => `answered ${answer.status}`,
        () => 'no answer',
      );
      let waiting: number[] = [];
      for (const deadline = Date.now() + 10_000; waiting.length === 0;) {
        if (Date.now() > deadline) throw new Error(`the doomed replica never waited to ${step.what}`);
        await new Promise((r) => setTimeout(r, 20));
        waiting = (
          await db.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'
                AND query ILIKE $1 AND NOT (pid = ANY($2))`,
            [step.blockedOn, ourPids],
          )
        ).rows.map((row) => row.pid);
      }
      await step.beforeKill();
      doomed.child.kill('SIGKILL');
      await doomed.exited();
      // Its statement waiting on the lock would still run once the lock goes: it dies with its process.
      await db.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [waiting]);
      await ours.query('ROLLBACK');
      expect(await cutOff).toBe('no answer');
    } finally {
      await ours.end();
    }
  }

  /** Codes the issuer checked through `services` (`three_ds_request_duration_seconds`, step challenge). */
  async function issuerChecks(services: ServiceProcess[]): Promise<number> {
    let total = 0;
    for (const { url } of services) {
      const text = await (await fetch(`${url}/metrics`)).text();
      for (const [, labels, value] of text.matchAll(
        /^three_ds_request_duration_seconds_count\{([^}]*)\} (\d+)$/gm,
      )) {
        if (labels.includes('step="challenge"')) total += Number(value);
      }
    }
    return total;
  }

  const charges = async (transactionId: string) =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM sandbox_acquirer_ledger WHERE reference = $1`,
        [transactionId],
      )
    ).rows[0].n;

  /** Whether the challenge's card is still sealed on its session (kept only until the outcome). */
  const cardSealed = async (id: string) =>
    (
      await db.query<{ kept: boolean }>(
        `SELECT sealed_card IS NOT NULL AS kept FROM three_ds_sessions WHERE id = $1`,
        [id],
      )
    ).rows[0].kept;

  /** The order's status once it reads paid, or after 15 s: orders learns of a payment from its event. */
  async function orderStatusOnceSettled(orderId: string): Promise<string> {
    let status = '';
    for (const deadline = Date.now() + 15_000; status !== 'paid' && Date.now() < deadline;) {
      if (status) await new Promise((r) => setTimeout(r, 100));
      status = (await callService(orders.url, merchant.apiKey, 'GET', `/api/v2/orders/${orderId}`)).body.status;
    }
    return status;
  }

  const statusOf = async (transactionId: string) =>
    (await db.query<{ status: string }>(`SELECT status FROM transactions WHERE id = $1`, [transactionId]))
      .rows[0].status;

  it('one code submitted to two replicas at once is checked with the issuer once, round after round', async () => {
    for (let round = 0; round < 15; round++) {
      const c = await challenge(replicas[round % 2].url);
      const checked = await issuerChecks(replicas);
      const answers = await Promise.all(replicas.map(({ url }) => submit(url, c)));
      expect(answers).toEqual([
        { status: 200, transStatus: 'Y' },
        { status: 200, transStatus: 'Y' },
      ]);
      expect((await issuerChecks(replicas)) - checked).toBe(1);
      expect([await statusOf(c.transactionId), await charges(c.transactionId)]).toEqual(['Success', 1]);
      expect(await cardSealed(c.id)).toBe(false);
    }
  });

  it('a replica killed after claiming the check leaves a challenge the shopper finishes on the other once the claim runs out', async () => {
    const [doomed, survivor] = replicas;
    const c = await challenge(survivor.url);
    // The payment's row held: the doomed replica claims the check, asks the issuer, then waits to
    // record the outcome; it is killed there.
    await killWhileBlocked(doomed, c, {
      hold: ['SELECT 1 FROM transactions WHERE id = $1 FOR UPDATE', [c.transactionId]],
      blockedOn: 'UPDATE "transactions"%',
      what: 'record the outcome',
      beforeKill: async () => {
        const claimed = await db.query<{ status: string; live: boolean }>(
          `SELECT status, check_claimed_until > now() AS live FROM three_ds_sessions WHERE id = $1`,
          [c.id],
        );
        expect(claimed.rows[0]).toEqual({ status: 'Created', live: true });
      },
    });
    replicas = [survivor];

    // Nothing was recorded: the challenge is still open, its claim left behind, nothing charged.
    const left = await db.query<{ status: string; live: boolean }>(
      `SELECT status, check_claimed_until > now() AS live FROM three_ds_sessions WHERE id = $1`,
      [c.id],
    );
    expect(left.rows[0]).toEqual({ status: 'Created', live: true });
    expect([await statusOf(c.transactionId), await charges(c.transactionId)]).toEqual(['Created', 0]);

    // The shopper submits again at once: the survivor waits the claim out, then checks the code once.
    const checked = await issuerChecks([survivor]);
    const started = Date.now();
    const retried = await submit(survivor.url, c);
    expect(retried).toEqual({ status: 200, transStatus: 'Y' });
    expect(Date.now() - started).toBeLessThan(CHECK_LEASE_MS + 5_000);
    expect((await issuerChecks([survivor])) - checked).toBe(1);
    expect([await statusOf(c.transactionId), await charges(c.transactionId)]).toEqual(['Success', 1]);
    const postAuth = await callService(survivor.url, '', 'POST', `/3ds/api/v2/${c.id}/postAuth`, {});
    expect(postAuth.body.data).toMatchObject({ status: 'Authorized', paymentStatus: 'Success' });
  });

  it('a replica killed after it committed the answered challenge in flight, before the acquirer had it: the other replica finishes the payment', async () => {
    const [survivor] = replicas;
    // Its own acquirer call waits as long as it must (no timeout to record before it is killed).
    const doomed = await startServiceProcess(PAYMENTS_MAIN, {
      ...paymentsVars,
      HTTP_PORT: String(await freePort()),
      ACQUIRER_TIMEOUT_MS: '60000',
      ACQUIRER_RECOVERY_AFTER_MS: '120000',
    });
    replicas = [survivor, doomed];
    const { body: order } = await callService(orders.url, merchant.apiKey, 'POST', '/api/v2/orders', {
      amount: '25.00',
      currency: 'EUR',
    });
    const c = await challenge(survivor.url, order.orderId as string);
    // The acquirer's ledger held: the doomed replica checks the code, commits the payment in
    // flight (write-ahead), takes the order's lock and waits to reach the acquirer; it is killed there.
    await killWhileBlocked(doomed, c, {
      hold: ['LOCK TABLE sandbox_acquirer_ledger IN EXCLUSIVE MODE', []],
      blockedOn: '%INSERT INTO sandbox_acquirer_ledger%',
      what: 'reach the acquirer',
      beforeKill: async () => {
        const inFlight = await db.query<{ session: string; payment: string; pending: boolean }>(
          `SELECT s.status AS session, t.status AS payment, t.acquirer_pending_since IS NOT NULL AS pending
             FROM three_ds_sessions s JOIN transactions t ON t.id = s.transaction_id WHERE s.id = $1`,
          [c.id],
        );
        expect(inFlight.rows[0]).toEqual({ session: 'Authorized', payment: 'Processing', pending: true });
      },
    });
    replicas = [survivor];
    expect(await charges(c.transactionId)).toBe(0); // nothing reached the acquirer

    // The shopper's page polls postAuth on the survivor (the SDK retries 409): the payment goes on.
    let answer = await callService(survivor.url, '', 'POST', `/3ds/api/v2/${c.id}/postAuth`, {});
    for (const deadline = Date.now() + 30_000; answer.status === 409 && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 200));
      answer = await callService(survivor.url, '', 'POST', `/3ds/api/v2/${c.id}/postAuth`, {});
    }
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({ status: 'Authorized', paymentStatus: 'Success' });
    expect([await statusOf(c.transactionId), await charges(c.transactionId)]).toEqual(['Success', 1]);
    expect(await orderStatusOnceSettled(order.orderId as string)).toBe('paid');
    // The card was kept sealed only until the acquirer's answer was recorded.
    expect(await cardSealed(c.id)).toBe(false);
  });

  it('orders paused when an answered challenge goes to take its lock: the payment waits in flight and succeeds once orders is back', async () => {
    // One replica whose recovery waits two minutes for a call sent to the acquirer: this payment,
    // never sent, is due at its next sweep instead, so the shopper waits for orders, not for that.
    for (const running of replicas) running.child.kill('SIGKILL');
    const replica = await startServiceProcess(PAYMENTS_MAIN, {
      ...paymentsVars,
      HTTP_PORT: String(await freePort()),
      ACQUIRER_RECOVERY_AFTER_MS: '120000',
    });
    replicas = [replica];
    const { body: order } = await callService(orders.url, merchant.apiKey, 'POST', '/api/v2/orders', {
      amount: '25.00',
      currency: 'EUR',
    });
    const c = await challenge(replica.url, order.orderId as string);
    orders.child.kill('SIGSTOP');
    try {
      // The code is right: the challenge ends authenticated although the order cannot be asked.
      expect(await submit(replica.url, c)).toEqual({ status: 200, transStatus: 'Y' });
      const inFlight = await db.query<{ status: string; pending: boolean }>(
        `SELECT status, acquirer_pending_since IS NOT NULL AS pending FROM transactions WHERE id = $1`,
        [c.transactionId],
      );
      expect(inFlight.rows[0]).toEqual({ status: 'Processing', pending: true });
      expect([await charges(c.transactionId), await cardSealed(c.id)]).toEqual([0, true]);
      const waiting = await callService(replica.url, '', 'POST', `/3ds/api/v2/${c.id}/postAuth`, {});
      expect(waiting.status).toBe(409);
    } finally {
      orders.child.kill('SIGCONT');
    }

    let answer = await callService(replica.url, '', 'POST', `/3ds/api/v2/${c.id}/postAuth`, {});
    for (const deadline = Date.now() + 30_000; answer.status === 409 && Date.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 200));
      answer = await callService(replica.url, '', 'POST', `/3ds/api/v2/${c.id}/postAuth`, {});
    }
    expect(answer.body.data).toMatchObject({ status: 'Authorized', paymentStatus: 'Success' });
    expect([await statusOf(c.transactionId), await charges(c.transactionId)]).toEqual(['Success', 1]);
    expect(await orderStatusOnceSettled(order.orderId as string)).toBe('paid');
    expect(await cardSealed(c.id)).toBe(false);
  });
});
