import { parseArgs } from 'node:util';
import { z } from 'zod';
import { baseConfigSchema, loadConfig } from '../config/config.js';
import { MerchantDirectory } from '../auth/merchants.js';
import { NatsContext, natsOptionsFrom } from '../messaging/nats.js';
import { ensureEventsStream } from '../messaging/streams.js';
import { paymentAttemptLimitSettings } from '../rate-limit/rate-limit.config.js';
import { ensureRateLimitBucket } from '../rate-limit/rate-limiter.js';
import { generateRpcKeyPair } from '../rpc/rpc-identity.js';
import { listDeadLetters, replayDeadLetters } from './dead-letters.js';

const cliConfigSchema = z.object({
  NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  NATS_USER: z.string().optional(),
  NATS_PASSWORD: z.string().optional(),
  NATS_TLS_CA_FILE: baseConfigSchema.shape.NATS_TLS_CA_FILE,
  NATS_TLS_CERT_FILE: baseConfigSchema.shape.NATS_TLS_CERT_FILE,
  NATS_TLS_KEY_FILE: baseConfigSchema.shape.NATS_TLS_KEY_FILE,
  NATS_SUBJECT_PREFIX: z.string().default(''),
  EVENTS_STREAM: z.string().default('EVENTS'),
  EVENTS_STREAM_REPLICAS: baseConfigSchema.shape.EVENTS_STREAM_REPLICAS,
  API_KEYS_BUCKET: z.string().default('API_KEYS'),
  MERCHANTS_BUCKET: z.string().default('MERCHANTS'),
  RATE_LIMIT_BUCKET: paymentAttemptLimitSettings.RATE_LIMIT_BUCKET,
  RATE_LIMIT_WINDOW_MS: paymentAttemptLimitSettings.RATE_LIMIT_WINDOW_MS,
  DATABASE_URL: z.string().optional(),
});

const USAGE = `Usage: npm run cli -- <command>

  merchants create --name <name> [--mode sandbox|live] [--json]   create a merchant and its first API key
  merchants list                                                  list merchants
  merchants origins <merchantId> [--set <o1,o2,...> | --clear]    the origins of the merchant's sites the hosted form may
                                                                  return to, message and be framed by (prints them)
  keys create --merchant <merchantId> [--json]                    issue another API key
  keys revoke <apiKey>                                            revoke a key (every service stops accepting it within a second)
  keys verify <apiKey>                                            exit 0 when the key is valid
  nats provision                                                  create the EVENTS stream and the KV buckets (API keys,
                                                                  merchants, rate limits)
  rpc keygen [service ...]                                        new RPC identities: each service's RPC_SIGNING_KEY and
                                                                  the RPC_TRUSTED_CALLERS every service is given
  vault rotate-kek | vault new-kek --id <id>                      the card vault's keys (npm run cli -- vault --help)
  webhooks reseal-secrets                                         webhook settings' secrets under the first key of
                                                                  WEBHOOK_SECRETS_KEYS (npm run cli -- webhooks --help)
  dead-letters list [--json]                                      the events a service's consumers set aside (DATABASE_URL:
                                                                  that service's database)
  dead-letters replay <id> | --all                                publish them again, once their cause is fixed

A merchant's developer (a sandbox API key in $BYRD_API_KEY; npm run cli -- listen --help):
  listen --forward-to <url> [--events <a,b>]                      stream the sandbox webhooks to a local address, signed
  trigger <event>                                                 produce a real sandbox event by running its flow

Environment: NATS_URL (default nats://127.0.0.1:4222), NATS_USER, NATS_PASSWORD, NATS_TLS_CA_FILE (and
NATS_TLS_CERT_FILE, NATS_TLS_KEY_FILE for mutual TLS), EVENTS_STREAM, EVENTS_STREAM_REPLICAS (1), API_KEYS_BUCKET,
MERCHANTS_BUCKET, RATE_LIMIT_BUCKET and RATE_LIMIT_WINDOW_MS (its TTL: two windows); DATABASE_URL for dead-letters.`;

type Out = { log: (line: string) => void; error: (line: string) => void };

/** Command groups of a service's own CLI (deploy/local/cli.mjs runs them from a checkout). */
const SERVICE_CLIS: Record<string, { service: string; entry: string } | undefined> = {
  vault: { service: 'gateway-tokens', entry: 'vault-cli.js' },
  webhooks: { service: 'webhook-service', entry: 'webhooks-cli.js' },
};

/** Entry point of `npm run cli`; returns the process exit code. */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  out: Out = console,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        mode: { type: 'string', default: 'sandbox' },
        merchant: { type: 'string' },
        set: { type: 'string' },
        clear: { type: 'boolean', default: false },
        all: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    // An unknown flag or a flag missing its value: a script must notice (exit 1, usage on stderr).
    return fail(out, `${(error as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const [group, command, argument] = positionals;
  if (values.help) {
    out.log(USAGE);
    return 0;
  }
  if (!group) return fail(out, USAGE);
  if (group === 'rpc' && command === 'keygen') return keygen(positionals.slice(2), out);
  // Their services' own CLIs (npm run cli routes them there): not this one, which touches nothing first.
  const serviceCli = SERVICE_CLIS[group];
  if (serviceCli) {
    return fail(
      out,
      `"${group}" commands are the ${serviceCli.service} CLI's: npm run cli -- ${group} --help from a checkout, ` +
        `or node dist/${serviceCli.entry} in the ${serviceCli.service} image`,
    );
  }
  const config = loadConfig(cliConfigSchema, env);
  const nats = await NatsContext.open(natsOptionsFrom(config, 'byrd-cli'), config.NATS_SUBJECT_PREFIX);
  try {
    // A service's dead letters need its database and the stream, not the merchants' buckets.
    if (group === 'dead-letters') {
      if (!config.DATABASE_URL)
        return fail(out, 'dead-letters needs DATABASE_URL: the database of the service');
      if (command === 'list') return await listDeadLetters(config.DATABASE_URL, out, values.json);
      if (command === 'replay')
        return await replayDeadLetters(config.DATABASE_URL, nats, { id: argument, all: values.all }, out);
    }
    const directory = new MerchantDirectory(
      await nats.kv(config.MERCHANTS_BUCKET, config.EVENTS_STREAM_REPLICAS),
      await nats.kv(config.API_KEYS_BUCKET, config.EVENTS_STREAM_REPLICAS),
    );
    switch (`${group} ${command ?? ''}`.trim()) {
      case 'merchants create': {
        if (!values.name?.trim()) return fail(out, 'merchants create needs --name <name>');
        if (values.mode !== 'sandbox' && values.mode !== 'live')
          return fail(out, '--mode must be sandbox or live');
        const { merchant, apiKey } = await directory.create(values.name.trim(), values.mode);
        const result = { merchantId: merchant.merchantId, apiKey, name: merchant.name, mode: merchant.mode };
        out.log(
          values.json
            ? JSON.stringify(result)
            : `Merchant ${merchant.name} (${merchant.mode})\n  merchant id: ${merchant.merchantId}\n  API key:     ${apiKey}\nKeep the key: it is shown only once.`,
        );
        return 0;
      }
      case 'merchants list': {
        for (const m of await directory.list()) out.log(`${m.merchantId}  ${m.mode.padEnd(7)}  ${m.name}`);
        return 0;
      }
      case 'merchants origins': {
        const merchant = argument ? await directory.get(argument) : null;
        if (!merchant) return fail(out, 'merchants origins needs the merchantId of an existing merchant');
        let origins = merchant.checkoutOrigins ?? [];
        if (values.set !== undefined || values.clear) {
          const entries = values.clear
            ? []
            : (values.set ?? '')
                .split(',')
                .map((o) => o.trim())
                .filter(Boolean);
          try {
            origins = (await directory.setCheckoutOrigins(merchant.merchantId, entries)) ?? [];
          } catch (error) {
            return fail(out, (error as Error).message);
          }
        }
        out.log(
          values.json
            ? JSON.stringify({ merchantId: merchant.merchantId, origins })
            : origins.join('\n') || "(none: only each order's redirectUrl)",
        );
        return 0;
      }
      case 'keys create': {
        const merchant = values.merchant ? await directory.get(values.merchant) : null;
        if (!merchant) return fail(out, 'keys create needs --merchant <merchantId> of an existing merchant');
        const apiKey = await directory.issueKey(merchant);
        out.log(values.json ? JSON.stringify({ merchantId: merchant.merchantId, apiKey }) : apiKey);
        return 0;
      }
      case 'keys revoke': {
        if (!argument) return fail(out, 'keys revoke needs the API key');
        if (!(await directory.revokeKey(argument))) return fail(out, 'No such API key');
        out.log('Key revoked.');
        return 0;
      }
      case 'keys verify': {
        const record = argument ? await directory.findKey(argument) : null;
        if (!record) return fail(out, 'The key is not valid');
        out.log(`Valid key of merchant ${record.merchantId} (${record.mode})`);
        return 0;
      }
      case 'nats provision': {
        await ensureEventsStream(
          nats.jsm,
          config.EVENTS_STREAM,
          config.NATS_SUBJECT_PREFIX,
          config.EVENTS_STREAM_REPLICAS,
        );
        // Its TTL as the services give it (two windows); one with a longer window raises it at boot.
        await ensureRateLimitBucket(nats, config.RATE_LIMIT_BUCKET, {
          ttlMs: 2 * config.RATE_LIMIT_WINDOW_MS,
          replicas: config.EVENTS_STREAM_REPLICAS,
        });
        out.log(
          `Stream ${config.EVENTS_STREAM} and buckets ${config.API_KEYS_BUCKET}, ${config.MERCHANTS_BUCKET}, ${config.RATE_LIMIT_BUCKET} are ready (${config.EVENTS_STREAM_REPLICAS} copies each).`,
        );
        return 0;
      }
      default:
        return fail(out, `Unknown command "${positionals.join(' ')}"\n\n${USAGE}`);
    }
  } finally {
    await nats.close();
  }
}

/**
 * Services that take part in the authenticated RPC subjects (RPC_CALLERS): callers sign requests,
 * servers (orders too) sign replies.
 */
const RPC_SERVICES = ['orders', 'payments', 'gateway-tokens', 'hosted-form-bff'];

function keygen(services: string[], out: Out): number {
  const names = services.length > 0 ? services : RPC_SERVICES;
  const identities = names.map((name) => ({ name, ...generateRpcKeyPair() }));
  for (const { name, privateKey } of identities) out.log(`${name} RPC_SIGNING_KEY=${privateKey}`);
  out.log(`RPC_TRUSTED_CALLERS=${identities.map((i) => `${i.name}:${i.publicKey}`).join(',')}`);
  return 0;
}

function fail(out: Out, message: string): number {
  out.error(message);
  return 1;
}
