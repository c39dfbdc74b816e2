// What the webhooks benchmark measures, started: the webhook service on a migrated database, a
// receiver (its own process, or in this harness with --receiver inline) subscribed by the bench
// merchant's setting, and, for the noisy-neighbour phase, a second merchant whose receiver fails.
import { randomBytes } from 'node:crypto';
import type { TestMerchant } from '@byrd/platform/testing';
import type { RunContext } from '../core/guarded-run.js';
import { tail, type ProcessGroup } from '../core/processes.js';
import { freePort, migrate, requestJson, startHelper, startService, type Listening } from '../core/stack.js';
import { fail, note, pollUntil, round, step } from '../core/util.js';
import { EVENT, nowEpoch, type Publisher } from './events.js';
import { remoteReceiver, startReceiver, type Receiver } from './receiver.js';

export const SERVICE = 'webhook-service';

export interface WebhooksStack {
  databaseUrl: string;
  merchant: TestMerchant;
  service: Listening;
  receiver: Receiver;
  receiverProcess: Listening | null;
  settingsId: string;
}

/** A receiver process answering `answer` (200, 500 or hang). */
async function receiverProcess(group: ProcessGroup, name: string, answer: string) {
  const managed = await startHelper(group, name, 'webhooks/receiver.js', { ANSWER: answer }, '/health');
  return { managed, receiver: remoteReceiver(managed.url) };
}

/** Subscribes `merchant` to EVENT at `url` (the service learns a new API key from its KV bucket within a second). */
async function subscribe(service: Listening, merchant: TestMerchant, url: string): Promise<string> {
  let answer = { status: 0, body: undefined as { data?: { id: string } } | undefined };
  await pollUntil(
    async () => {
      answer = await requestJson<{ data?: { id: string } }>(`${service.url}/api/v1/settings`, {
        method: 'POST',
        headers: { 'x-api-key': merchant.apiKey },
        body: { url, credentialType: 'api-key', events: [EVENT] },
      });
      return answer.status === 201;
    },
    { timeoutMs: 10_000, intervalMs: 100 },
  );
  const id = answer.body?.data?.id;
  if (answer.status !== 201 || !id)
    fail(`POST /api/v1/settings answered ${answer.status} ${JSON.stringify(answer.body)}.`);
  return id;
}

export async function startWebhooksStack(
  { env, group }: RunContext,
  s: { receiver: string; concurrency: string | null; serviceEnv: Record<string, string> },
  inline: { receiver?: Receiver },
): Promise<WebhooksStack> {
  const databaseUrl = await env.database(SERVICE);
  await migrate(group, SERVICE, databaseUrl);
  const merchant = await env.createMerchant('Bench Merchant');
  note(`sandbox merchant ${merchant.merchantId}`);
  step(
    `Starting the receiver (${s.receiver === 'inline' ? 'in this process' : 'its own process'}) and the webhook service`,
  );
  let receiver: Receiver;
  let managed: Listening | null = null;
  if (s.receiver === 'inline') receiver = inline.receiver = await startReceiver();
  else ({ managed, receiver } = await receiverProcess(group, 'receiver', '200'));
  const serviceEnv = {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_SECRETS_KEYS: randomBytes(32).toString('base64'),
    ...(s.concurrency ? { WEBHOOK_CONCURRENCY: s.concurrency } : {}),
    ...s.serviceEnv,
  };
  const service = await startService(
    group,
    SERVICE,
    await env.serviceEnv(SERVICE, await freePort(), serviceEnv),
  );
  note(`webhook service ${service.url} (pid ${service.pid}), receiver ${receiver.url}`);
  const settingsId = await subscribe(service, merchant, receiver.url);
  note(`setting ${settingsId}: ${EVENT} -> ${receiver.url} (api-key credential, signed)`);
  return { databaseUrl, merchant, service, receiver, receiverProcess: managed, settingsId };
}

export interface NoisyNeighbour {
  merchantId: string;
  settingsId: string;
  receiver: Receiver;
  pid: number;
  inserted: number;
}

/** A second merchant whose setting points at a receiver process answering 500 or never. */
export async function startNoisyNeighbour(
  { env, group }: RunContext,
  stack: WebhooksStack,
  answer: string,
): Promise<NoisyNeighbour> {
  const { managed, receiver } = await receiverProcess(group, 'noisy-receiver', answer);
  const merchant = await env.createMerchant('Noisy Merchant');
  const settingsId = await subscribe(stack.service, merchant, receiver.url);
  note(`noisy merchant ${merchant.merchantId}: setting ${settingsId} -> ${receiver.url} (answers ${answer})`);
  return { merchantId: merchant.merchantId, settingsId, receiver, pid: managed.pid, inserted: 0 };
}

/** One event published and delivered before measuring (the first delivery is cold). */
export async function smokeTest(stack: WebhooksStack, publisher: Publisher): Promise<void> {
  step('Smoke test');
  const [key] = publisher.newEvents(1).keys;
  await publisher.publishOne(key, publisher.envelopeOf(key), nowEpoch());
  const arrived = await pollUntil(async () => (await stack.receiver.count()).distinct >= 1, {
    timeoutMs: 30_000,
    intervalMs: 50,
  });
  if (!arrived) fail(`The smoke event was not delivered within 30 s:\n${tail(stack.service.logFile)}`);
  const [first] = await stack.receiver.arrivals();
  note(
    `delivered in ${round(first[2] - (publisher.sentAt.get(key) ?? first[2]), 1)} ms (first delivery, cold)`,
  );
}
