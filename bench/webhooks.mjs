// `npm run bench -- webhooks`: the webhook service (apps/webhook-service/dist) delivering events
// published on this run's JetStream stream to a local receiver, then the cost of its claim query.
//
// Phases, one after another:
//   1. throughput: N `transaction.payment.success` events of one sandbox merchant (one setting, so
//      one webhook each) published as fast as JetStream acknowledges them (pipelined, msgID = event
//      id); delivered/s from the first publish to the last arrival at the receiver, latency of each
//      from its publish call to its arrival, the service's CPU per delivery and peak RSS, and how fast
//      the fan-out (JetStream consumer -> webhook rows) kept up;
//   2. paced: `--rate` events/s for `--duration` s, evenly scheduled; latency from each event's
//      scheduled publish time to its arrival (a late publish counts against the event, no
//      coordinated omission);
//   3. delivery stage only: the same number of webhooks due now inserted straight into the table
//      (JetStream and the fan-out bypassed; skip with --no-delivery-only): what the delivery workers
//      (claim, signed POST, record) do alone, to tell which stage holds the end-to-end number back;
//   4. noisy neighbour (skip with --no-noisy): another merchant's receiver answers 500 (or, with
//      `--noisy hang`, never answers) and has `--noisy-rows` (100 000) webhooks due now inserted straight
//      into the table, while `--rate` events/s are published for the bench merchant as in phase 2: its
//      p99 and deliveries/s must not notice (per-endpoint cap and circuit breaker, docs/webhook-fairness.md);
//   ledger: published (+ inserted) = succeeded + pending + failed rows (one webhook per event), the receiver saw
//      exactly the succeeded webhook ids (duplicates reported), every noisy row still pending or failed:
//      otherwise the run is VOID (exit 1);
//   5. claim: the service stopped, 10 000 then `--future-rows` pending webhooks due in the future and
//      `--due-rows` due now are stored; CLAIM_WEBHOOKS_SQL, imported from the service's dist (the
//      statement the workers run, not a copy, asked for WEBHOOK_CLAIM_BATCH rows of the setting), runs `--claim-runs` times at each size in a
//      transaction that is rolled back (each run claims the same due rows), p50/p99 and the ratio
//      of the two sizes, with EXPLAIN (ANALYZE, BUFFERS) of each.
//
// The receiver (bench/lib/webhook-receiver.mjs) answers 200 with an empty body at once; it runs as its
// own process by default (`--receiver inline` runs it in this harness instead).
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes, randomUUID } from 'node:crypto';
import { BenchEnvironment, poolFor } from './lib/environment.mjs';
import { guardedRun } from './lib/guarded-run.mjs';
import { tail } from './lib/processes.mjs';
import { freePort, requestJson, waitForHttp } from './lib/net.mjs';
import { migrate, serviceMain, serviceMigrate, startService } from './lib/stack.mjs';
import {
  cpuBetween,
  cpuSnapshot,
  machineBusyCores,
  memoryOf,
  otherCores,
  sampleRss,
  waitForQuietMachine,
} from './lib/proc-stats.mjs';
import { sampleDbActivity } from './lib/pg-activity.mjs';
import { platformFiles } from './lib/platform.mjs';
import { distTimes } from './lib/build.mjs';
import { GOAL_SERVICE_RSS_MB, goalLine, table, writeResult } from './lib/report.mjs';
import { remoteReceiver, startReceiver } from './lib/webhook-receiver.mjs';
import {
  ROOT,
  TARGET_REVISION,
  TARGET_ROOT,
  dbName,
  fail,
  gitState,
  note,
  paint,
  percentile,
  pollUntil,
  positiveNumber,
  round,
  serviceEnvOf,
  sleep,
  step,
} from './lib/util.mjs';

export const description = 'webhook deliveries/s, event-to-receiver latency, claim query cost (issue 5)';

export const options = {
  events: { type: 'string', default: '20000', help: 'events published in the throughput phase' },
  rate: { type: 'string', default: '500', help: 'events/s of the paced latency phase' },
  duration: { type: 'string', default: '10', help: 'seconds of the paced latency phase' },
  concurrency: {
    type: 'string',
    help: 'WEBHOOK_CONCURRENCY of the service (default: the service default, 128)',
  },
  'future-rows': {
    type: 'string',
    default: '1000000',
    help: 'pending webhooks due in the future for the large claim measurement (the small one: 10000)',
  },
  'due-rows': { type: 'string', default: '100', help: 'webhooks due now, claimed by every claim run' },
  'claim-runs': { type: 'string', default: '300', help: 'measured claim statements per table size' },
  receiver: {
    type: 'string',
    default: 'process',
    help: 'where the receiver runs: "process" (its own) or "inline" (this harness)',
  },
  'no-claim': { type: 'boolean', default: false, help: 'skip the claim query phase' },
  'no-delivery-only': {
    type: 'boolean',
    default: false,
    help: 'skip the phase that inserts due rows directly (delivery stage alone, fan-out bypassed)',
  },
  noisy: {
    type: 'string',
    default: '500',
    help: 'the noisy neighbour\'s receiver: "500" (answers 500 at once) or "hang" (until WEBHOOK_TIMEOUT_MS)',
  },
  'noisy-rows': {
    type: 'string',
    default: '100000',
    help: "webhooks due now at the noisy neighbour's endpoint",
  },
  'no-noisy': { type: 'boolean', default: false, help: 'skip the noisy-neighbour phase' },
  'quiet-wait': {
    type: 'string',
    default: '30',
    help: 'before each phase, wait up to this many seconds for other work on the machine to stop',
  },
  'keep-logs': { type: 'boolean', default: false, help: "keep the processes' logs (always kept on failure)" },
  'service-env': {
    type: 'string',
    multiple: true,
    help: 'extra environment of the webhook service, KEY=VALUE (repeatable), e.g. WEBHOOK_CLAIM_BATCH=200',
  },
};

const SERVICE = 'webhook-service';
const EVENT = 'transaction.payment.success';
const DURABLE = 'webhooks-transactions';
const SMALL_FUTURE_ROWS = 10_000;
const CLAIM_WARMUP_RUNS = 30;
const PUBLISH_WINDOW = 512; // publishes awaiting their JetStream ack at once
const STALL_TIMEOUT_MS = 30_000; // a phase gives up waiting when nothing arrives for this long

const GOAL_RPS = 2000;
const GOAL_P99_MS = 100;
const GOAL_CLAIM_RATIO = 1.5;
const GOAL_NOISY_RATE_SHARE = 0.9; // the merchant beside a noisy neighbour gets >= 90 % of its offered rate
/** The index the claim reads due rows through: each endpoint's, or (before fairness) the global one. */
const DUE_INDEXES = ['webhooks_endpoint_due_idx', 'webhooks_due_idx'];

const contractsFile = () => join(TARGET_ROOT, 'libs/contracts/dist/events/envelope.js');
const contentFile = () => join(TARGET_ROOT, 'libs/contracts/dist/events/content.js');
const deliveryQueueFile = () => join(TARGET_ROOT, 'apps', SERVICE, 'dist/delivery/delivery-queue.js');

/** dist files this benchmark runs (checked, and built when missing, before it runs). */
export const requires = () => [
  serviceMain(SERVICE),
  serviceMigrate(SERVICE),
  deliveryQueueFile(),
  contractsFile(),
  contentFile(),
  ...platformFiles(),
];

/** The data of a bench event (a frictionless card payment's success), keyed by its transaction id. */
function envelopeData(transactionId) {
  return {
    transactionId,
    orderId: null,
    orderRef: 'bench-webhook',
    status: 'Success',
    operationType: 'Payment',
    amount: '25.00',
    currency: 'EUR',
    code: 'BYRD200',
    description: 'Operation successfully completed',
    isoAmount: 2500,
    paymentMethod: 'card',
    initiatedFrom: 'Server',
  };
}

/** Epoch milliseconds with sub-millisecond resolution, comparable between processes of this machine. */
const nowEpoch = () => performance.timeOrigin + performance.now();

function summarise(values) {
  const sorted = Float64Array.from(values).sort();
  const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null;
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50), 2),
    p90: round(percentile(sorted, 90), 2),
    p99: round(percentile(sorted, 99), 2),
    max: round(sorted.length ? sorted[sorted.length - 1] : null, 2),
    mean: round(mean, 2),
  };
}

export async function run(args) {
  const settings = {
    events: Math.round(positiveNumber('events', args.events)),
    rate: positiveNumber('rate', args.rate),
    durationS: positiveNumber('duration', args.duration),
    concurrency: args.concurrency
      ? String(Math.round(positiveNumber('concurrency', args.concurrency)))
      : null,
    futureRows: Math.round(positiveNumber('future-rows', args['future-rows'])),
    dueRows: Math.round(positiveNumber('due-rows', args['due-rows'])),
    claimRuns: Math.round(positiveNumber('claim-runs', args['claim-runs'])),
    receiver: args.receiver,
    claim: !args['no-claim'],
    deliveryOnly: !args['no-delivery-only'],
    noisy: args['no-noisy'] ? null : args.noisy,
    noisyRows: Math.round(positiveNumber('noisy-rows', args['noisy-rows'])),
    quietWaitS: Math.max(0, Number(args['quiet-wait']) || 0),
    serviceEnv: serviceEnvOf(args['service-env']),
  };
  if (!['process', 'inline'].includes(settings.receiver))
    fail(`--receiver is "process" or "inline", got "${settings.receiver}".`);
  if (settings.noisy !== null && !['500', 'hang'].includes(settings.noisy))
    fail(`--noisy is "500" or "hang", got "${settings.noisy}".`);
  const startedAt = new Date();
  let env;
  let inlineReceiver;
  const budgetMs =
    300_000 +
    (settings.events / 100) * 1000 +
    settings.durationS * 1000 * (settings.noisy ? 5 : 3) +
    (settings.noisy ? 120_000 : 0) +
    (settings.claim ? (settings.futureRows / 1e6) * 300_000 + settings.claimRuns * 2 * 200 : 0);
  return guardedRun({
    name: 'webhooks',
    budgetMs,
    keepLogs: args['keep-logs'],
    measure,
    cleanup: async () => {
      await inlineReceiver?.close();
      if (!env) return;
      const problems = await env.cleanup();
      for (const problem of problems) note(`cleanup: ${problem}`);
      note(`dropped database byrd_${env.run}_webhook_service and stream/KV ${env.streamName}, *_${env.run}`);
    },
  });

  async function measure({ group }) {
    const { createEnvelope, parseEnvelope } = await import(pathToFileURL(contractsFile()).href);
    const { toPublicContent } = await import(pathToFileURL(contentFile()).href);

    step('Environment');
    const busyBefore = await machineBusyCores(1000);
    note(
      `machine: ${cpus().length} cores, ${round(busyBefore, 2)} cores busy before the run${busyBefore > 0.25 ? paint('1;33', ' (other work is running: results will be noisy)') : ''}`,
    );
    env = await BenchEnvironment.create();
    const databaseUrl = await env.database(SERVICE);
    note(`run ${env.run}: database ${dbName(databaseUrl)}, stream ${env.streamName}`);
    await migrate(group, SERVICE, databaseUrl);
    const merchant = await env.createMerchant('Bench Merchant', 'sandbox');
    note(`sandbox merchant ${merchant.merchantId}`);

    step(
      `Starting the receiver (${settings.receiver === 'inline' ? 'in this process' : 'its own process'}) and the webhook service`,
    );
    let receiver;
    let receiverProcess = null;
    if (settings.receiver === 'inline') {
      inlineReceiver = await startReceiver();
      receiver = inlineReceiver;
    } else {
      const port = await freePort();
      receiverProcess = group.startNode('receiver', join(ROOT, 'bench/lib/webhook-receiver.mjs'), {
        env: { HTTP_PORT: String(port), NODE_ENV: 'production' },
      });
      await waitForHttp(`http://127.0.0.1:${port}/health`, {
        managed: receiverProcess,
        what: 'the receiver',
      });
      receiver = remoteReceiver(port);
    }
    const serviceEnv = {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_SECRETS_KEYS: randomBytes(32).toString('base64'),
      ...(settings.concurrency ? { WEBHOOK_CONCURRENCY: settings.concurrency } : {}),
      ...settings.serviceEnv,
    };
    const service = await startService(
      group,
      SERVICE,
      await env.serviceEnv(SERVICE, { port: await freePort(), extra: serviceEnv }),
    );
    note(`webhook service ${service.url} (pid ${service.pid}), receiver ${receiver.url}`);

    const subscribed = await requestJson(`${service.url}/api/v1/settings`, {
      method: 'POST',
      headers: { 'x-api-key': merchant.apiKey },
      body: { url: receiver.url, credentialType: 'api-key', events: [EVENT] },
    });
    if (subscribed.status !== 201)
      fail(`POST /api/v1/settings answered ${subscribed.status} ${JSON.stringify(subscribed.body)}.`);
    const settingsId = subscribed.body?.data?.id;
    note(`setting ${settingsId}: ${EVENT} -> ${receiver.url} (api-key credential, signed)`);

    // Every webhook the run asked for: transactionId (the receiver's key) -> the time it was
    // published (or inserted, for the rows of the delivery-only phase, also listed in `injected`).
    const sentAt = new Map();
    const injected = new Set();
    const publishErrors = [];
    const envelopeOf = (transactionId) => {
      const envelope = createEnvelope(EVENT, {
        merchantId: merchant.merchantId,
        paymentMethod: 'card',
        data: envelopeData(transactionId),
      });
      return { id: envelope.id, payload: JSON.stringify(envelope) };
    };
    parseEnvelope(envelopeOf(randomUUID()).payload); // the consumers' parser accepts what is published
    const subject = env.nats.subject(EVENT);
    const publishOne = (key, event, at) => {
      sentAt.set(key, at);
      return env.nats.js.publish(subject, event.payload, { msgID: event.id }).then(
        () => undefined,
        (error) => {
          publishErrors.push(String(error));
          sentAt.delete(key);
        },
      );
    };

    const monitorPool = poolFor(databaseUrl, 2);
    const cpuGroups = {
      'webhook-service': service.pid,
      receiver: receiverProcess ? receiverProcess.pid : [],
      postgres: { comm: 'postgres' },
      'nats-server': { comm: 'nats-server' },
      harness: 'self',
      machine: 'machine',
    };
    const rssPids = {
      'webhook-service': service.pid,
      ...(receiverProcess ? { receiver: receiverProcess.pid } : {}),
    };
    const phases = [];
    let arrivalsSeen = 0;
    let noisy = null; // the noisy neighbour: { merchantId, settingsId, receiver, inserted }

    try {
      step('Smoke test');
      {
        const key = randomUUID();
        await publishOne(key, envelopeOf(key), nowEpoch());
        const arrived = await pollUntil(async () => (await receiver.count()).distinct >= 1, {
          timeoutMs: 30_000,
          intervalMs: 50,
        });
        if (!arrived) fail(`The smoke event was not delivered within 30 s:\n${tail(service.logFile)}`);
        arrivalsSeen = 1;
        const [first] = await receiver.arrivals();
        note(`delivered in ${round(first[2] - sentAt.get(key), 1)} ms (first delivery, cold)`);
      }

      // 1. Throughput.
      {
        const name = 'throughput';
        step(`${name}: ${settings.events} events published as fast as JetStream acknowledges them`);
        const keys = [];
        const events = [];
        for (let i = 0; i < settings.events; i++) {
          const key = randomUUID();
          keys.push(key);
          events.push(envelopeOf(key));
        }
        if (settings.quietWaitS > 0) await waitForQuietMachine(settings.quietWaitS);
        const phase = await window(name, keys, async () => {
          let inFlight = 0;
          let release = null;
          const pending = [];
          for (let i = 0; i < events.length; i++) {
            while (inFlight >= PUBLISH_WINDOW) await new Promise((resolve) => (release = resolve));
            inFlight++;
            pending.push(
              publishOne(keys[i], events[i], nowEpoch()).finally(() => {
                inFlight--;
                const wake = release;
                release = null;
                wake?.();
              }),
            );
          }
          await Promise.all(pending);
        });
        phases.push(phase);
        printPhaseLine(phase);
      }

      // 2. Latency at a steady rate.
      {
        const name = `paced ${settings.rate}/s`;
        const total = Math.max(1, Math.round(settings.rate * settings.durationS));
        step(
          `${name}: ${total} events over ${settings.durationS} s, latency from each scheduled publish time`,
        );
        const { keys, events } = newEvents(total);
        if (settings.quietWaitS > 0) await waitForQuietMachine(settings.quietWaitS);
        const phase = await window(name, keys, (stats) => publishPaced(keys, events, stats));
        phase.offeredRate = settings.rate;
        phases.push(phase);
        printPhaseLine(phase);
      }

      // 3. The delivery stage alone: rows due now inserted straight into the table (fan-out bypassed).
      if (settings.deliveryOnly) {
        const name = 'delivery stage only';
        step(
          `${name}: ${settings.events} webhooks due now inserted in one statement (no JetStream, no fan-out)`,
        );
        const keys = Array.from({ length: settings.events }, () => randomUUID());
        const content = JSON.stringify(toPublicContent(EVENT, envelopeData(keys[0])));
        if (settings.quietWaitS > 0) await waitForQuietMachine(settings.quietWaitS);
        const phase = await window(name, keys, async () => {
          const at = nowEpoch();
          for (const key of keys) {
            sentAt.set(key, at);
            injected.add(key);
          }
          // Nothing wakes the workers: they find the rows at their next poll (WEBHOOK_POLL_MS, 250 ms).
          await monitorPool.query(
            `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, reference_ids,
               content, occurred_at, status, next_attempt_at, created_at)
             SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), $3, 'card', ARRAY[k],
               jsonb_set($4::jsonb, '{transactionId}', to_jsonb(k)), now(), 'pending', now(), now()
             FROM unnest($5::text[]) k`,
            [merchant.merchantId, settingsId, EVENT, content, keys],
          );
        });
        phases.push(phase);
        printPhaseLine(phase);
      }

      // 4. A noisy neighbour: another merchant's failing endpoint with a huge due backlog, while the
      // bench merchant gets the paced load of phase 2.
      if (settings.noisy) {
        const name = `noisy neighbour (${settings.noisy})`;
        const total = Math.max(1, Math.round(settings.rate * settings.durationS));
        step(
          `${name}: ${settings.noisyRows} webhooks due now at a receiver that ${settings.noisy === 'hang' ? 'never answers' : 'answers 500'}, ` +
            `then ${total} events at ${settings.rate}/s for the bench merchant`,
        );
        noisy = await startNoisyNeighbour();
        const { keys, events } = newEvents(total);
        if (settings.quietWaitS > 0) await waitForQuietMachine(settings.quietWaitS);
        const { rows: inserted } = await monitorPool.query(
          `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, reference_ids,
             content, occurred_at, status, next_attempt_at, created_at)
           SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), $3, 'card', '{}', $4::jsonb, now(), 'pending',
             now() - interval '1 second' + g * interval '1 microsecond', now()
           FROM generate_series(1, $5::int) g
           RETURNING 1`,
          [
            noisy.merchantId,
            noisy.settingsId,
            EVENT,
            JSON.stringify(toPublicContent(EVENT, envelopeData(randomUUID()))),
            settings.noisyRows,
          ],
        );
        noisy.inserted = inserted.length;
        // A real backlog builds up over hours, with autovacuum analysing the table on the way; one
        // statement does not, and plans made for a tenth of the rows would be measured instead.
        await monitorPool.query('ANALYZE webhooks');
        // The backlog is being worked on (the first attempts went out) before the merchant's load starts.
        await pollUntil(async () => (await noisy.receiver.count()).requests > 0, {
          timeoutMs: 10_000,
          intervalMs: 20,
        });
        const noisyBefore = (await noisy.receiver.count()).requests;
        const phase = await window(name, keys, (stats) => publishPaced(keys, events, stats));
        phase.offeredRate = settings.rate;
        phase.noisy = {
          answer: settings.noisy,
          rows: noisy.inserted,
          requestsDuringWindow: (await noisy.receiver.count()).requests - noisyBefore,
          ...(await noisyState()),
        };
        phases.push(phase);
        printPhaseLine(phase);
        note(
          `noisy endpoint: ${phase.noisy.requestsDuringWindow} requests during the window, ${phase.noisy.attempts} attempts recorded in all, ` +
            `${phase.noisy.pending} of ${phase.noisy.rows} still pending (${phase.noisy.inFlight} in flight), circuit ${phase.noisy.circuit}`,
        );
      }

      step('Ledger');
      const ledger = await checkLedger();
      printLedger(ledger);

      const memory = {
        serviceHwmMb: round(memoryOf(service.pid)?.hwmMb ?? null, 1),
        receiverHwmMb: receiverProcess ? round(memoryOf(receiverProcess.pid)?.hwmMb ?? null, 1) : null,
      };

      let claim = null;
      if (settings.claim) {
        step('Claim query: stopping the webhook service (nobody claims meanwhile)');
        await group.stop(service);
        claim = await measureClaim(databaseUrl, settingsId, merchant.merchantId, settings);
      }

      const result = buildResult({
        settings,
        startedAt,
        env,
        phases,
        ledger,
        memory,
        claim,
        busyBefore,
        service,
      });
      printReport(result);
      const file = writeResult('webhooks', result, startedAt);
      console.log(`\nJSON: ${file}`);
      if (!ledger.ok) process.exitCode = 1;
      return result;
    } finally {
      await monitorPool.end();
    }

    /**
     * One measured phase: `publish(stats)` publishes the events of `keys`; the window runs from just
     * before it until the receiver has every one of them (or nothing arrived for STALL_TIMEOUT_MS).
     */
    async function window(name, keys, publish) {
      const expected = arrivalsSeen + keys.length;
      const rss = sampleRss(rssPids);
      const activity = sampleDbActivity(monitorPool, dbName(databaseUrl));
      const progress = sampleProgress(monitorPool);
      const stats = {};
      const before = cpuSnapshot(cpuGroups);
      const firstPublish = nowEpoch();
      await publish(stats);
      const publishedAt = nowEpoch();
      let last = -1;
      let lastChange = Date.now();
      let complete = false;
      for (;;) {
        const { distinct } = await receiver.count();
        if (distinct >= expected) {
          complete = true;
          break;
        }
        if (distinct !== last) {
          last = distinct;
          lastChange = Date.now();
        } else if (Date.now() - lastChange > STALL_TIMEOUT_MS) break;
        await sleep(20);
      }
      const cpu = cpuBetween(before, cpuSnapshot(cpuGroups));
      const peakRssMb = rss.stop();
      const db = await activity.stop();
      const fanOut = await progress.stop();
      const arrivals = await receiver.arrivals();
      arrivalsSeen = new Set(arrivals.map((a) => a[1])).size;

      const wanted = new Set(keys);
      const firstArrival = new Map();
      let duplicates = 0;
      for (const [key, , at] of arrivals) {
        if (!wanted.has(key)) continue;
        if (firstArrival.has(key)) duplicates++;
        else firstArrival.set(key, at);
      }
      const latencies = [];
      let lastArrival = firstPublish;
      for (const [key, at] of firstArrival) {
        latencies.push(at - sentAt.get(key));
        if (at > lastArrival) lastArrival = at;
      }
      const delivered = firstArrival.size;
      const seconds = (lastArrival - firstPublish) / 1000;
      return {
        name,
        events: keys.length,
        delivered,
        complete,
        duplicates,
        publishSeconds: round((publishedAt - firstPublish) / 1000, 3),
        publishedPerSecond: round(keys.length / ((publishedAt - firstPublish) / 1000)),
        seconds: round(seconds, 3),
        deliveredPerSecond: round(delivered / seconds),
        latencyMs: summarise(latencies),
        fanOut: {
          ...fanOut,
          createdPerSecond: fanOut.allCreatedAfterMs
            ? round((keys.length * 1000) / fanOut.allCreatedAfterMs)
            : null,
        },
        cpu,
        peakRssMb,
        db,
        ...stats,
      };
    }

    /** `total` events of the bench merchant, each under a key of its own. */
    function newEvents(total) {
      const keys = Array.from({ length: total }, () => randomUUID());
      return { keys, events: keys.map((key) => envelopeOf(key)) };
    }

    /** Publishes `events` evenly at --rate; each event's time is its scheduled one (no coordinated omission). */
    async function publishPaced(keys, events, stats) {
      const total = keys.length;
      const interval = 1000 / settings.rate;
      const start = performance.now() + 20;
      const pending = [];
      let lateMax = 0;
      for (let i = 0; i < total;) {
        const now = performance.now();
        while (i < total && start + i * interval <= now) {
          const scheduled = start + i * interval;
          lateMax = Math.max(lateMax, now - scheduled);
          pending.push(publishOne(keys[i], events[i], performance.timeOrigin + scheduled));
          i++;
        }
        if (i < total) await sleep(Math.max(0, start + i * interval - performance.now()));
      }
      await Promise.all(pending);
      stats.publishLateMaxMs = round(lateMax, 1);
    }

    /** A second merchant whose setting points at a receiver process answering 500 or never. */
    async function startNoisyNeighbour() {
      const port = await freePort();
      const process_ = group.startNode('noisy-receiver', join(ROOT, 'bench/lib/webhook-receiver.mjs'), {
        env: { HTTP_PORT: String(port), NODE_ENV: 'production', ANSWER: settings.noisy },
      });
      await waitForHttp(`http://127.0.0.1:${port}/health`, { managed: process_, what: 'the noisy receiver' });
      const noisyReceiver = remoteReceiver(port);
      // Its CPU counts with the receivers' (not as other work on the machine).
      cpuGroups.receiver = [receiverProcess?.pid, process_.pid].filter(Boolean);
      const noisyMerchant = await env.createMerchant('Noisy Merchant', 'sandbox');
      // The service learns a new API key from the KV bucket within a second.
      let answer;
      await pollUntil(
        async () => {
          answer = await requestJson(`${service.url}/api/v1/settings`, {
            method: 'POST',
            headers: { 'x-api-key': noisyMerchant.apiKey },
            body: { url: noisyReceiver.url, credentialType: 'api-key', events: [EVENT] },
          });
          return answer.status === 201;
        },
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      if (answer.status !== 201)
        fail(
          `POST /api/v1/settings (noisy merchant) answered ${answer.status} ${JSON.stringify(answer.body)}.`,
        );
      note(
        `noisy merchant ${noisyMerchant.merchantId}: setting ${answer.body.data.id} -> ${noisyReceiver.url} (answers ${settings.noisy})`,
      );
      return {
        merchantId: noisyMerchant.merchantId,
        settingsId: answer.body.data.id,
        receiver: noisyReceiver,
        inserted: 0,
      };
    }

    /** Where the noisy endpoint's webhooks and circuit stand (the circuit as the service's metrics say). */
    async function noisyState() {
      const { rows } = await monitorPool.query(
        `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
           count(*) FILTER (WHERE status = 'failed')::int AS failed,
           count(*) FILTER (WHERE status NOT IN ('pending', 'failed'))::int AS other,
           count(*) FILTER (WHERE status = 'pending' AND lease_until > now())::int AS "inFlight",
           coalesce(sum(attempt_count), 0)::int AS attempts
         FROM webhooks WHERE settings_id = $1`,
        [noisy.settingsId],
      );
      const metrics = await fetch(`${service.url}/metrics`).then((r) => r.text(), () => '');
      const open = /^webhook_endpoint_circuits_open (\d+)/m.exec(metrics);
      return { ...rows[0], circuit: open ? (open[1] === '0' ? 'closed' : 'open') : 'n/a' };
    }

    /** Webhook rows created and delivered, sampled every 250 ms during a window. */
    function sampleProgress(pool) {
      const start = Date.now();
      let stopped = false;
      const samples = [];
      let base = null;
      const loop = (async () => {
        while (!stopped) {
          try {
            // The bench merchant's rows (not the noisy neighbour's backlog).
            const { rows } = await pool.query(
              `SELECT count(*)::int AS created, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded
               FROM webhooks WHERE settings_id = $1`,
              [settingsId],
            );
            base ??= rows[0];
            samples.push({ ms: Date.now() - start, ...rows[0] });
          } catch {
            // a sample lost is not worth failing a run
          }
          await sleep(250);
        }
      })();
      return {
        async stop() {
          stopped = true;
          await loop;
          const final = samples.at(-1);
          const allCreated = samples.find((s) => final && s.created === final.created);
          return {
            maxUndelivered: Math.max(0, ...samples.map((s) => s.created - s.succeeded)),
            allCreatedAfterMs: allCreated && base && final.created > base.created ? allCreated.ms : null,
            samples: samples.map((s) => [
              s.ms,
              s.created - (base?.created ?? 0),
              s.succeeded - (base?.succeeded ?? 0),
            ]),
          };
        },
      };
    }

    async function checkLedger() {
      const expected = sentAt.size; // webhooks asked for: one per published event, plus the inserted rows
      const publishedCount = expected - injected.size;
      // Everything published has been handed to the fan-out, and what was claimed has been recorded.
      const consumerIdle = await pollUntil(
        async () => {
          const backlog = await env.consumerBacklog(DURABLE);
          return backlog && backlog.pending === 0 && backlog.ackPending === 0;
        },
        { timeoutMs: 60_000, intervalMs: 100 },
      );
      let settled = null;
      let previous = null;
      await pollUntil(
        async () => {
          const { rows } = await monitorPool.query(
            `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
               count(*) FILTER (WHERE status = 'pending')::int AS pending,
               count(*) FILTER (WHERE status = 'pending' AND lease_token IS NOT NULL)::int AS leased,
               count(*) FILTER (WHERE status = 'failed')::int AS failed,
               count(*) FILTER (WHERE status = 'canceled')::int AS canceled,
               count(*)::int AS total
             FROM webhooks WHERE settings_id = $1`,
            [settingsId],
          );
          settled = rows[0];
          const same = previous && JSON.stringify(previous) === JSON.stringify(settled);
          previous = settled;
          return settled.leased === 0 && (settled.pending === 0 || same);
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      );
      const attempts = Number(
        (await monitorPool.query('SELECT count(*) AS n FROM webhook_attempts')).rows[0].n,
      );
      const deadLetters = Number(
        (
          await monitorPool
            .query('SELECT count(*) AS n FROM dead_letters')
            .catch(() => ({ rows: [{ n: NaN }] }))
        ).rows[0].n,
      );
      const stream = await env.streamState();
      const backlog = await env.consumerBacklog(DURABLE);
      const arrivals = await receiver.arrivals();
      const { requests } = await receiver.count();
      const ids = new Set();
      const keys = new Set();
      let unknown = 0;
      for (const [key, id] of arrivals) {
        ids.add(id);
        keys.add(key);
        if (!sentAt.has(key)) unknown++;
      }
      const accounted = settled.succeeded + settled.pending + settled.failed;
      const noisyRows = noisy ? await noisyState() : null;
      const checks = {
        'published (+ inserted) = succeeded + pending + failed': expected === accounted,
        'one webhook row per published event': settled.total === expected && settled.canceled === 0,
        'receiver saw each succeeded webhook id once or more': ids.size === settled.succeeded,
        'every arrival belongs to a published event': unknown === 0 && keys.size === ids.size,
        'stream holds every published event': stream.messages === publishedCount,
        'fan-out consumer drained': Boolean(consumerIdle),
        ...(noisyRows && {
          'noisy endpoint: every inserted webhook still pending or failed (none lost)':
            noisyRows.pending + noisyRows.failed === noisy.inserted &&
            noisyRows.other === 0 &&
            noisy.inserted === settings.noisyRows,
        }),
      };
      return {
        published: publishedCount,
        inserted: injected.size,
        publishErrors: publishErrors.length,
        publishErrorSamples: publishErrors.slice(0, 3),
        streamMessages: stream.messages,
        rows: settled,
        attempts,
        deadLetters,
        noisy: noisyRows && { inserted: noisy.inserted, ...noisyRows },
        consumer: backlog,
        receiver: {
          requests,
          distinctIds: ids.size,
          distinctEvents: keys.size,
          duplicates: requests - ids.size,
          unknown,
        },
        checks,
        ok: Object.values(checks).every(Boolean),
      };
    }
  }
}

/**
 * The claim statement's latency with SMALL_FUTURE_ROWS, then `futureRows`, pending webhooks due in the
 * future (one to a few hours ahead, as retries are) and `dueRows` due now, in the service's database
 * with the service stopped. Each run claims the due rows in a transaction that is rolled back.
 */
async function measureClaim(databaseUrl, settingsId, merchantId, s) {
  const { CLAIM_WEBHOOKS_SQL } = await import(pathToFileURL(deliveryQueueFile()).href);
  if (typeof CLAIM_WEBHOOKS_SQL !== 'string')
    fail(`${deliveryQueueFile()} does not export CLAIM_WEBHOOKS_SQL.`);
  // What the service's workers pass: WEBHOOK_CLAIM_BATCH and WEBHOOK_LEASE_MS (their defaults unless set).
  const claimBatch = Number(s.serviceEnv.WEBHOOK_CLAIM_BATCH ?? 100);
  const leaseMs = Number(s.serviceEnv.WEBHOOK_LEASE_MS ?? 30_000);
  // The claim by endpoint ($1 settings, $2 rows of each, $3 lease) or, measuring an older commit,
  // the claim of the oldest due rows overall ($1 rows, $2 lease).
  const perEndpoint = /\$3\b/.test(CLAIM_WEBHOOKS_SQL);
  const params = perEndpoint ? [[settingsId], [claimBatch], leaseMs] : [claimBatch, leaseMs];
  const client = poolFor(databaseUrl, 1);
  const { rows: indexes } = await client.query(
    `SELECT indexname FROM pg_indexes WHERE tablename = 'webhooks' AND indexname = ANY ($1)`,
    [DUE_INDEXES],
  );
  const dueIndex = indexes[0]?.indexname ?? DUE_INDEXES[0];
  const content = JSON.stringify({
    transactionId: randomUUID(),
    orderId: null,
    orderRef: 'bench-webhook',
    status: 'Failed',
    operationType: 'Payment',
    amount: '25.00',
    currency: 'EUR',
    code: 'BYRD200',
    description: 'Operation successfully completed',
  });
  const insert = (from, to, due) =>
    client.query(
      `INSERT INTO webhooks (id, merchant_id, settings_id, event_id, event, payment_method, reference_ids,
         content, occurred_at, status, attempt_count, next_attempt_at, created_at)
       SELECT gen_random_uuid(), $1, $2, gen_random_uuid(), 'transaction.payment.success', 'card',
         ARRAY[gen_random_uuid()::text], $3::jsonb, now() - interval '1 hour', 'pending', 1 + g % 50,
         ${due ? `now() - interval '1 minute' + g * interval '1 ms'` : `now() + interval '1 hour' + g * interval '10 ms'`},
         now() - interval '1 hour'
       FROM generate_series($4::int, $5::int) g`,
      [merchantId, settingsId, content, from, to],
    );
  const sizes = [];
  try {
    const started = performance.now();
    await insert(1, s.dueRows, true);
    let stored = 0;
    for (const target of [SMALL_FUTURE_ROWS, Math.max(SMALL_FUTURE_ROWS, s.futureRows)]) {
      if (sizes.length && target === stored) break;
      step(`Claim query: ${target} future retries + ${s.dueRows} due`);
      const t0 = performance.now();
      await insert(stored + 1, target, false);
      stored = target;
      await client.query('VACUUM (ANALYZE) webhooks');
      const fillSeconds = (performance.now() - t0) / 1000;
      note(`stored in ${round(fillSeconds, 1)} s (insert + VACUUM ANALYZE)`);
      if (s.quietWaitS > 0) await waitForQuietMachine(s.quietWaitS);
      const runOnce = async () => {
        const c = await client.connect();
        try {
          await c.query('BEGIN');
          const start = performance.now();
          const answer = await c.query(CLAIM_WEBHOOKS_SQL, params);
          const ms = performance.now() - start;
          await c.query('ROLLBACK');
          return { ms, claimed: answer.rowCount };
        } catch (error) {
          await c.query('ROLLBACK').catch(() => undefined);
          throw error;
        } finally {
          c.release();
        }
      };
      for (let i = 0; i < CLAIM_WARMUP_RUNS; i++) await runOnce();
      const busyBefore = machineCpuBusy();
      const times = [];
      let claimedWrong = 0;
      for (let i = 0; i < s.claimRuns; i++) {
        const { ms, claimed } = await runOnce();
        times.push(ms);
        if (claimed !== Math.min(claimBatch, s.dueRows)) claimedWrong++;
      }
      const machineCores = machineCpuBusy(busyBefore);
      const plan = await explain(client, CLAIM_WEBHOOKS_SQL, params, dueIndex);
      const { rows } = await client.query(
        `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*)::int AS total,
           pg_relation_size('${dueIndex}') AS due_index_bytes, pg_relation_size('webhooks') AS table_bytes
         FROM webhooks`,
      );
      sizes.push({
        futureRows: target,
        dueRows: s.dueRows,
        storedRows: rows[0].total,
        pendingRows: rows[0].pending,
        dueIndexMb: round(Number(rows[0].due_index_bytes) / 2 ** 20, 1),
        tableMb: round(Number(rows[0].table_bytes) / 2 ** 20, 1),
        fillSeconds: round(fillSeconds, 1),
        runs: times.length,
        claimedPerRun: Math.min(claimBatch, s.dueRows),
        runsClaimingOtherwise: claimedWrong,
        latencyMs: summarise(times),
        machineCoresDuring: round(machineCores, 2),
        plan,
      });
      const size = sizes.at(-1);
      note(
        `claim of ${size.claimedPerRun}: p50 ${size.latencyMs.p50} ms, p99 ${size.latencyMs.p99} ms; plan: ${plan.summary.join(' | ')}`,
      );
    }
    note(`claim phase took ${round((performance.now() - started) / 1000, 1)} s`);
  } finally {
    await client.end();
  }
  const [small, large] = sizes;
  return {
    statement: `CLAIM_WEBHOOKS_SQL from apps/${SERVICE}/dist/delivery/delivery-queue.js`,
    limit: claimBatch,
    leaseMs,
    perEndpoint,
    dueIndex,
    sizes,
    ratioP50: large ? round(large.latencyMs.p50 / small.latencyMs.p50, 3) : null,
    ratioP99: large ? round(large.latencyMs.p99 / small.latencyMs.p99, 3) : null,
    ratioMean: large ? round(large.latencyMs.mean / small.latencyMs.mean, 3) : null,
  };
}

/** Busy cores of the whole machine since `before` (a snapshot this answers when called without one). */
function machineCpuBusy(before) {
  const snapshot = cpuSnapshot({ machine: 'machine' });
  if (!before) return snapshot;
  return cpuBetween(before, snapshot).groups.machine.cores;
}

/** EXPLAIN (ANALYZE, BUFFERS) of a statement in a rolled-back transaction: { text, summary, usesDueIndex, seqScan }. */
async function explain(pool, sql, params, dueIndex) {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const { rows } = await c.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
    await c.query('ROLLBACK');
    const lines = rows.map((r) => r['QUERY PLAN']);
    // The scan that reads an endpoint's due rows (the loose scan over settings comes first in the plan).
    const scan =
      lines.find((l) => l.includes(`Index Scan using ${dueIndex}`)) ??
      lines.find((l) => /Scan .*on webhooks\b/.test(l));
    const scanAt = lines.indexOf(scan);
    const scanBuffers = lines.slice(scanAt + 1).find((l) => /^\s*Buffers:/.test(l));
    const summary = [
      scan?.trim().replace(/\s+\(cost=[^)]*\)/, ''),
      scanBuffers && `scan ${scanBuffers.trim()}`,
      lines.find((l) => /^\s*Buffers:/.test(l)) &&
        `total ${lines.find((l) => /^\s*Buffers:/.test(l)).trim()}`,
      lines.find((l) => /Execution Time/.test(l))?.trim(),
    ].filter(Boolean);
    return {
      text: lines,
      summary,
      usesDueIndex: lines.some((l) => l.includes(dueIndex)),
      seqScanOfWebhooks: lines.some((l) => /Seq Scan on webhooks\b/.test(l)),
    };
  } catch (error) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    c.release();
  }
}

function printPhaseLine(phase) {
  note(
    `${phase.name}: ${phase.delivered}/${phase.events} delivered${phase.complete ? '' : paint('1;31', ' (INCOMPLETE)')} in ${phase.seconds} s = ${phase.deliveredPerSecond}/s` +
      ` (published at ${phase.publishedPerSecond}/s), latency p50 ${phase.latencyMs.p50} ms, p99 ${phase.latencyMs.p99} ms, max ${phase.latencyMs.max} ms` +
      (phase.duplicates ? `, ${phase.duplicates} duplicates` : ''),
  );
}

/**
 * Which stage held a window back: the fan-out (events become webhook rows; nearly every row is
 * delivered as soon as it exists) or the delivery (rows wait to be delivered).
 */
function limitOf(phase) {
  const { createdPerSecond, maxUndelivered } = phase.fanOut;
  if (!createdPerSecond) return null;
  const fanOutBound = maxUndelivered <= Math.max(10, phase.events * 0.01);
  return fanOutBound
    ? `fan-out: webhook rows created at ${createdPerSecond}/s, at most ${maxUndelivered} waiting for delivery`
    : `delivery: up to ${maxUndelivered} webhook rows waiting for delivery (created at ${createdPerSecond}/s)`;
}

function printLedger(ledger) {
  const verdict = ledger.ok ? paint('1;32', 'OK') : paint('1;31', 'VOID');
  const { rows, receiver } = ledger;
  console.log(
    `    ${verdict}: published ${ledger.published}${ledger.inserted ? ` + inserted ${ledger.inserted}` : ''} = succeeded ${rows.succeeded} + pending ${rows.pending} + failed ${rows.failed}` +
      ` (${rows.total} webhook rows, ${rows.canceled} canceled); receiver: ${receiver.distinctIds} distinct webhook ids in ${receiver.requests} requests` +
      ` (${receiver.duplicates} duplicates, ${receiver.unknown} unknown); ${ledger.attempts} attempts recorded; stream ${ledger.streamMessages} messages;` +
      ` consumer pending ${ledger.consumer?.pending}, unacked ${ledger.consumer?.ackPending}; dead letters ${ledger.deadLetters}` +
      (ledger.noisy
        ? `; noisy endpoint: inserted ${ledger.noisy.inserted} = pending ${ledger.noisy.pending} + failed ${ledger.noisy.failed} (${ledger.noisy.attempts} attempts, circuit ${ledger.noisy.circuit})`
        : '') +
      (ledger.publishErrors ? `; ${ledger.publishErrors} publishes failed` : ''),
  );
  for (const [name, ok] of Object.entries(ledger.checks)) if (!ok) note(paint('1;31', `failed: ${name}`));
}

const MEASURED = ['webhook-service', 'receiver', 'postgres', 'nats-server', 'harness'];

function buildResult({ settings: s, startedAt, env, phases, ledger, memory, claim, busyBefore, service }) {
  const throughput = phases.find((p) => p.name === 'throughput');
  const paced = phases.find((p) => p.offeredRate && !p.noisy);
  const pacedSustained = paced ? paced.complete && paced.delivered === paced.events : false;
  const noisy = phases.find((p) => p.noisy);
  const noisySustained = noisy ? noisy.complete && noisy.delivered === noisy.events : false;
  return {
    benchmark: 'webhooks',
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    run: env.run,
    machine: {
      cores: cpus().length,
      memoryGb: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      busyCoresBeforeRun: round(busyBefore, 2),
    },
    git: TARGET_REVISION ? { ...TARGET_REVISION, snapshot: true } : gitState(),
    builds: distTimes(requires()),
    target: TARGET_ROOT === ROOT ? 'working tree' : TARGET_ROOT,
    settings: {
      ...s,
      event: `${EVENT} of one sandbox merchant, one setting (api-key credential, signed): one webhook per event`,
      service: `apps/${SERVICE}/dist/main.js, LOG_LEVEL=warn, NODE_ENV=production, WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, WEBHOOK_CONCURRENCY=${s.concurrency ?? '64 (default)'}`,
      receiver:
        s.receiver === 'inline'
          ? 'node:http in the harness process, 200 with an empty body'
          : 'bench/lib/webhook-receiver.mjs, its own process, node:http, 200 with an empty body',
      latency:
        'from the publish call (throughput) or the scheduled publish time (paced) to the arrival of the request',
      pid: service.pid,
    },
    phases: phases.map(({ cpu, peakRssMb, ...phase }) => ({
      ...phase,
      limit: limitOf(phase),
      cpu: {
        wallSeconds: round(cpu.wallSeconds, 2),
        otherCores: round(otherCores(cpu, MEASURED), 2),
        cores: Object.fromEntries(Object.entries(cpu.groups).map(([k, v]) => [k, round(v.cores, 3)])),
        msPerDelivery: Object.fromEntries(
          Object.entries(cpu.groups)
            .filter(([k]) => MEASURED.includes(k))
            .map(([k, v]) => [k, phase.delivered ? round((v.cpuSeconds * 1000) / phase.delivered, 3) : null]),
        ),
      },
      peakRssMb: Object.fromEntries(Object.entries(peakRssMb).map(([k, v]) => [k, round(v, 1)])),
    })),
    memory,
    ledger,
    claim,
    goals: [
      {
        name: 'deliveries/s (throughput phase, first publish to last arrival)',
        actual: throughput ? `${throughput.deliveredPerSecond}/s` : 'not measured',
        target: `>= ${GOAL_RPS}/s`,
        pass: throughput ? throughput.complete && throughput.deliveredPerSecond >= GOAL_RPS : null,
      },
      {
        name: `p99 event-to-receiver latency at ${paced?.offeredRate ?? s.rate} events/s`,
        actual: paced
          ? `${paced.latencyMs.p99} ms (${paced.delivered}/${paced.events} delivered${pacedSustained ? '' : ', not sustained'})`
          : 'not measured',
        target: `< ${GOAL_P99_MS} ms with every event delivered`,
        pass: paced ? paced.latencyMs.p99 < GOAL_P99_MS && pacedSustained : null,
      },
      ...(noisy
        ? [
            {
              name: `p99 event-to-receiver latency at ${noisy.offeredRate} events/s beside a noisy neighbour (${noisy.noisy.rows} due, ${noisy.noisy.answer})`,
              actual: `${noisy.latencyMs.p99} ms (${noisy.delivered}/${noisy.events} delivered${noisySustained ? '' : ', not sustained'})`,
              target: `< ${GOAL_P99_MS} ms with every event delivered`,
              pass: noisy.latencyMs.p99 < GOAL_P99_MS && noisySustained,
            },
            {
              name: 'deliveries/s beside a noisy neighbour',
              actual: `${noisy.deliveredPerSecond}/s of ${noisy.offeredRate}/s offered`,
              target: `>= ${GOAL_NOISY_RATE_SHARE * noisy.offeredRate}/s (${GOAL_NOISY_RATE_SHARE * 100} % of the offered rate)`,
              pass: noisySustained && noisy.deliveredPerSecond >= GOAL_NOISY_RATE_SHARE * noisy.offeredRate,
            },
          ]
        : []),
      {
        name: `claim latency ratio ${claim?.sizes?.[1]?.futureRows ?? s.futureRows}/${SMALL_FUTURE_ROWS} future retries (p50)`,
        actual: claim?.ratioP50 ?? 'not measured',
        target: `< ${GOAL_CLAIM_RATIO}`,
        pass: claim?.ratioP50 != null ? claim.ratioP50 < GOAL_CLAIM_RATIO : null,
      },
      {
        name: 'peak RSS of the webhook service (issue 17)',
        actual: memory.serviceHwmMb === null ? 'not measured' : `${memory.serviceHwmMb} MB`,
        target: `< ${GOAL_SERVICE_RSS_MB} MB`,
        pass: memory.serviceHwmMb === null ? null : memory.serviceHwmMb < GOAL_SERVICE_RSS_MB,
      },
    ],
  };
}

function printReport(result) {
  const { settings: s } = result;
  console.log(
    `\n${paint('1', 'webhooks')}  run ${result.run}  ${s.events} events, then ${s.rate}/s for ${s.durationS} s, ${result.machine.cores} cores, node ${result.machine.node}`,
  );
  console.log(`service:  ${s.service}`);
  console.log(`events:   ${s.event}`);
  console.log(`receiver: ${s.receiver}`);
  console.log(`latency:  ${s.latency}\n`);
  console.log(
    table(result.phases, [
      { title: 'phase', value: (p) => p.name },
      { title: 'events', value: (p) => p.events },
      { title: 'delivered', value: (p) => p.delivered },
      { title: 'published/s', value: (p) => p.publishedPerSecond },
      { title: 'fan-out/s', value: (p) => p.fanOut.createdPerSecond },
      { title: 'delivered/s', value: (p) => p.deliveredPerSecond },
      { title: 'p50 ms', value: (p) => p.latencyMs.p50 },
      { title: 'p99 ms', value: (p) => p.latencyMs.p99 },
      { title: 'max ms', value: (p) => p.latencyMs.max },
      { title: 'dups', value: (p) => p.duplicates },
      { title: 'max undelivered', value: (p) => p.fanOut.maxUndelivered },
      { title: 'service RSS MB', value: (p) => p.peakRssMb['webhook-service'] },
    ]),
  );
  console.log(
    '\nCPU per delivery (ms of CPU time per delivered webhook; "machine" = busy cores of the whole machine,' +
      '\n"other" = cores used by processes outside this run)',
  );
  console.log(
    table(result.phases, [
      { title: 'phase', value: (p) => p.name },
      ...MEASURED.map((label) => ({ title: label, value: (p) => p.cpu.msPerDelivery[label] })),
      { title: 'service cores', value: (p) => p.cpu.cores['webhook-service'] },
      { title: 'machine', value: (p) => p.cpu.cores.machine },
      { title: 'other', value: (p) => p.cpu.otherCores },
    ]),
  );
  console.log(
    '\nDatabase connections of the service during each window (averages; waits of active backends)',
  );
  console.log(
    table(result.phases, [
      { title: 'phase', value: (p) => p.name },
      { title: 'open', value: (p) => p.db.connections.total },
      { title: 'active', value: (p) => p.db.connections.active },
      { title: 'idle in tx', value: (p) => p.db.connections.idleInTransaction },
      {
        title: 'active backends wait on',
        align: 'left',
        value: (p) =>
          Object.entries(p.db.activeWaits)
            .slice(0, 4)
            .map(([wait, n]) => `${wait} ${n}`)
            .join(', '),
      },
    ]),
  );
  for (const phase of result.phases) if (phase.limit) console.log(`limit of ${phase.name}: ${phase.limit}`);
  for (const phase of result.phases.filter((p) => p.noisy))
    console.log(
      `${phase.name}: the noisy endpoint got ${phase.noisy.requestsDuringWindow} requests during the window; of its ` +
        `${phase.noisy.rows} webhooks ${phase.noisy.pending} are pending (${phase.noisy.inFlight} in flight), ${phase.noisy.failed} failed, ` +
        `${phase.noisy.attempts} attempts in all; circuit ${phase.noisy.circuit}`,
    );
  const noisy = result.phases.filter((p) => p.cpu.otherCores > 0.25);
  if (noisy.length)
    console.log(
      paint(
        '1;33',
        `warning: other processes kept ${Math.max(...noisy.map((p) => p.cpu.otherCores))} cores busy during ${noisy.map((p) => p.name).join(', ')}: those numbers are noisy, run again on a quiet machine`,
      ),
    );
  if (result.claim) {
    const c = result.claim;
    console.log(
      `\nClaim query (${c.statement}, ${c.perEndpoint ? `${c.limit} rows of one endpoint` : `limit ${c.limit}`}, rolled back after each run)`,
    );
    console.log(
      table(c.sizes, [
        { title: 'future retries', value: (r) => r.futureRows },
        { title: 'due', value: (r) => r.dueRows },
        { title: 'rows stored', value: (r) => r.storedRows },
        { title: 'due index MB', value: (r) => r.dueIndexMb },
        { title: 'runs', value: (r) => r.runs },
        { title: 'claimed', value: (r) => r.claimedPerRun },
        { title: 'p50 ms', value: (r) => r.latencyMs.p50 },
        { title: 'p99 ms', value: (r) => r.latencyMs.p99 },
        { title: 'max ms', value: (r) => r.latencyMs.max },
        { title: 'index', value: (r) => (r.plan.usesDueIndex ? c.dueIndex : 'NOT USED') },
        { title: 'machine cores', value: (r) => r.machineCoresDuring },
      ]),
    );
    for (const size of c.sizes) console.log(`  ${size.futureRows}: ${size.plan.summary.join(' | ')}`);
    console.log(
      `  ratio ${c.sizes.at(-1)?.futureRows}/${SMALL_FUTURE_ROWS}: p50 ${c.ratioP50}, p99 ${c.ratioP99}, mean ${c.ratioMean}`,
    );
    if (c.sizes.some((r) => r.runsClaimingOtherwise))
      console.log(
        paint('1;31', '  some runs claimed another number of rows than were due: look at the JSON'),
      );
  }
  console.log('\nLedger');
  printLedger(result.ledger);
  console.log(
    `\nPeak RSS (VmHWM, whole life): webhook service ${result.memory.serviceHwmMb} MB, receiver ${result.memory.receiverHwmMb ?? '-'} MB`,
  );
  const noisyGoal = noisy.length > 0;
  for (const goal of result.goals)
    console.log(
      goalLine(goal) +
        (noisyGoal && !goal.name.startsWith('claim')
          ? paint('1;33', '  (noisy: other work ran meanwhile)')
          : ''),
    );
  if (!result.ledger.ok)
    console.log(paint('1;31', 'VOID  the ledger does not balance: the numbers above are not a valid result'));
}
