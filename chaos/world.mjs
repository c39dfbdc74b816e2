// The chaos run's world: its own PostgreSQL and NATS, the migrated databases, a sandbox merchant,
// two replicas of every service behind balancers, the edge, and the merchant's webhook receiver
// subscribed to every event.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { NatsServer, PostgresCluster } from './infra.mjs';
import { Deployment, Supervisor } from './cluster.mjs';
import { startReceiver } from './receiver.mjs';
import { MerchantClient } from './client.mjs';
import { loadPlatform } from './lib/platform.mjs';
import { freePort } from './lib/net.mjs';
import { migrate, startEdge, writeRoutesFile } from './lib/stack.mjs';
import { note, step } from './lib/util.mjs';

export const SERVICES = ['orders', 'payments', 'gateway-tokens', 'webhook-service', 'hosted-form-bff'];
export const WITH_DATABASE = ['orders', 'payments', 'gateway-tokens', 'webhook-service'];
const key = () => randomBytes(32).toString('base64');

/** Variables a service needs beyond the common ones, with fast clocks so faults heal within the run. */
const SERVICE_ENV = () => ({
  payments: {
    CARD_SEAL_KEY: key(),
    ACQUIRER_TIMEOUT_MS: '5000',
    ACQUIRER_RECOVERY_AFTER_MS: '10000',
    ACQUIRER_RECOVERY_SWEEP_MS: '1000',
    THREE_DS_TIMEOUT_MS: '60000',
  },
  'gateway-tokens': { VAULT_KEKS: `chaos:${key()}`, VAULT_FINGERPRINT_KEY: key() },
  'webhook-service': {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_SECRETS_KEYS: key(),
    WEBHOOK_RETRY_UNIT_MS: '1000',
    // Half a retry unit, as by default (30 s to 1 minute).
    WEBHOOK_BREAKER_COOLDOWN_MS: '500',
    WEBHOOK_TIMEOUT_MS: '5000',
    WEBHOOK_LEASE_MS: '15000',
  },
});

function rpcIdentities() {
  return Object.fromEntries(
    SERVICES.map((service) => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      return [
        service,
        {
          privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
          publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
        },
      ];
    }),
  );
}

/** Fills `world` ({ group }) step by step, so destroyWorld can stop whatever a failed start left. */
export async function createWorld(world, { dir, logDir, replicas }) {
  const { group } = world;
  world.dbs = {};
  step('Own PostgreSQL cluster and NATS server');
  world.postgres = new PostgresCluster(dir);
  await world.postgres.start();
  world.nats = new NatsServer(dir);
  await world.nats.start();
  note(`PostgreSQL 127.0.0.1:${world.postgres.port}, NATS ${world.nats.url}, files in ${dir}`);

  step('Migrations and a sandbox merchant');
  for (const service of WITH_DATABASE) {
    world.dbs[service] = `byrd_${service.replaceAll('-', '_')}`;
    await migrate(group, service, world.postgres.url(world.dbs[service]));
  }
  const { MerchantDirectory, NatsContext } = await loadPlatform();
  world.natsClient = await NatsContext.open({ url: world.nats.url, name: 'byrd-chaos' }, '');
  const directory = new MerchantDirectory(
    await world.natsClient.kv('MERCHANTS'),
    await world.natsClient.kv('API_KEYS'),
  );
  const { merchant, apiKey } = await directory.create('Chaos Merchant', 'sandbox');
  world.merchantId = merchant.merchantId;

  step(`${replicas} replicas of every service behind the edge`);
  const edgePort = await freePort();
  const edgeUrl = `http://127.0.0.1:${edgePort}`;
  const identities = rpcIdentities();
  const trusted = Object.entries(identities)
    .map(([name, keys]) => `${name}:${keys.publicKey}`)
    .join(',');
  const extra = SERVICE_ENV();
  world.deployments = {};
  for (const service of SERVICES) {
    const env = {
      NODE_ENV: 'production',
      HTTP_HOST: '127.0.0.1',
      NATS_URL: world.nats.url,
      ...(world.dbs[service] ? { DATABASE_URL: world.postgres.url(world.dbs[service]) } : {}),
      PUBLIC_BASE_URL: edgeUrl,
      CHECKOUT_URL: `${edgeUrl}/checkout`,
      THREE_DS_SDK_URL: `${edgeUrl}/3ds/sdk.js`,
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json',
      RPC_SIGNING_KEY: identities[service].privateKey,
      RPC_TRUSTED_CALLERS: trusted,
      ...(extra[service] ?? {}),
    };
    world.deployments[service] = new Deployment(group, service, replicas, env);
  }
  await Promise.all(Object.values(world.deployments).map((deployment) => deployment.start()));
  const ports = Object.fromEntries(Object.entries(world.deployments).map(([name, d]) => [name, d.port]));
  world.edge = await startEdge(group, writeRoutesFile(logDir, ports), { port: edgePort });
  world.supervisor = new Supervisor(Object.values(world.deployments));
  world.supervisor.run();
  const readyMs = await world.supervisor.untilAllReady(120_000);
  if (readyMs === null) throw new Error('The replicas did not all become ready within 120 s (see the logs).');
  note(
    `all ${SERVICES.length * replicas} replicas ready after ${(readyMs / 1000).toFixed(1)} s; edge ${edgeUrl}`,
  );

  world.receiver = await startReceiver();
  world.client = new MerchantClient(edgeUrl, apiKey);
  await world.client.expect(201, 'POST', '/api/v1/settings', {
    url: world.receiver.url,
    credentialType: 'api-key',
  });
}

export async function destroyWorld(world) {
  world.load?.halt();
  await world.supervisor?.stop();
  // Every process at once (SIGTERM, SIGKILL after 5 s): the run's data is not kept.
  world.group.stopping = true;
  await Promise.all(world.group.processes.map((managed) => world.group.stop(managed, 5_000)));
  await world.receiver?.close();
  await world.natsClient?.close().catch(() => undefined);
  await world.nats?.stop();
  world.postgres?.stop();
}
