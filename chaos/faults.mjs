// The faults a chaos run injects, one after another, and how long after each was lifted the
// platform had recovered from it.
import { pollUntil, sleep } from './lib/util.mjs';

const RECOVERY_TIMEOUT_MS = 120_000;
const SERVICES = ['orders', 'payments', 'gateway-tokens', 'webhook-service', 'hosted-form-bff'];

const killOne = (service) => ({
  name: `kill -9 one ${service} replica`,
  async inject({ deployments }) {
    deployments[service].replicas[0].kill();
  },
});

/** The services whose replicas hold leases (keys, order locks, deliveries) or unacknowledged events. */
const PAUSED = ['payments', 'orders', 'webhook-service'];

/** The faults of a full run (issue 16, item 4), in order; `quick` keeps one of each kind. */
export function faultPlan({ quick, outageMs, databaseDownMs, pauseMs }) {
  const plan = [
    ...(quick ? [killOne('payments')] : SERVICES.map(killOne)),
    {
      name: 'kill -9 both payments replicas',
      async inject({ deployments }) {
        for (const replica of deployments.payments.replicas) replica.kill();
      },
    },
    {
      // Longer than every lease of the world: the other replicas take over the paused ones' keys,
      // deliveries and stuck payments, then the paused ones wake up and finish what they held.
      name: `one replica each of ${PAUSED.join(', ')} paused (SIGSTOP) ${pauseMs / 1000} s, then resumed`,
      async inject({ deployments }) {
        const paused = PAUSED.map((service) => deployments[service].replicas[0]);
        for (const replica of paused) replica.pause();
        try {
          await sleep(pauseMs);
        } finally {
          for (const replica of paused) replica.resume();
        }
      },
    },
    {
      name: 'NATS stop, start',
      async inject({ nats }) {
        await nats.stop();
        await sleep(outageMs);
        await nats.start();
      },
    },
    ...['fast', 'immediate'].map((mode) => ({
      name: `PostgreSQL stop -m ${mode}, down ${databaseDownMs / 1000} s, start`,
      async inject({ postgres }) {
        await postgres.restart(mode, databaseDownMs);
      },
    })),
    {
      name: `webhook receiver answers 500 for ${outageMs / 1000} s`,
      recovered: retriedWebhooksDelivered,
      async inject({ receiver }) {
        receiver.setMode('fail');
        await sleep(outageMs);
        receiver.setMode('ok');
      },
    },
    {
      name: `webhook receiver accepts and never answers for ${outageMs / 1000} s`,
      recovered: retriedWebhooksDelivered,
      async inject({ receiver }) {
        receiver.setMode('hang');
        await sleep(outageMs);
        receiver.setMode('ok');
      },
    },
  ];
  return quick ? plan.filter((fault) => !/-m fast|both payments/.test(fault.name)) : plan;
}

/** The receiver is back: no webhook that failed an attempt is still waiting for its retry. */
async function retriedWebhooksDelivered({ postgres, dbs }) {
  const [{ n }] = await postgres.query(
    `SELECT count(*)::int AS n FROM webhooks WHERE status = 'pending' AND attempt_count > 0`,
    [],
    dbs['webhook-service'],
  );
  return n === 0;
}

/** Every replica passes its readiness probe again. */
const replicasReady = ({ supervisor }) => supervisor.allReady();

/**
 * Runs the plan: each fault, then measures how long after it was lifted the platform recovered
 * (its `recovered` check, by default every replica ready again) and waits `recoveryMs` of calm.
 * Answers the timeline [{ name, startedAt, liftedAt, recoveredMs, endedAt, retries, unreadyReplicas }] (retries: the
 * merchant's requests retried meanwhile; unreadyReplicas: the most failing their probe at once).
 */
export async function runFaults(plan, world, { recoveryMs, log }) {
  const timeline = [];
  for (const fault of plan) {
    const entry = { name: fault.name, startedAt: Date.now() };
    const retriesBefore = world.client.retries;
    let unready = 0;
    const sampler = setInterval(() => {
      unready = Math.max(unready, world.supervisor.replicas.filter((replica) => !replica.ready).length);
    }, 100);
    log(`fault: ${fault.name}`);
    await fault.inject(world);
    entry.liftedAt = Date.now();
    const recovered = fault.recovered ?? replicasReady;
    const ok = await pollUntil(
      () =>
        Promise.resolve(world)
          .then(recovered)
          .catch(() => false),
      { timeoutMs: RECOVERY_TIMEOUT_MS, intervalMs: 100 },
    );
    entry.recoveredMs = ok ? Date.now() - entry.liftedAt : null;
    log(
      `  recovered ${entry.recoveredMs === null ? 'never (timeout)' : `${(entry.recoveredMs / 1000).toFixed(1)} s after it was lifted`}`,
    );
    await sleep(recoveryMs);
    clearInterval(sampler);
    entry.unreadyReplicas = unready;
    entry.endedAt = Date.now();
    entry.retries = world.client.retries - retriesBefore;
    timeline.push(entry);
  }
  return timeline;
}
