import 'reflect-metadata';
import { DataSource } from 'typeorm';
import {
  ConfigError,
  dataSourceOptions,
  loadConfig,
  parseServiceCommand,
  refuseCommand as fail,
} from '@byrd/platform';
import { resealSecretsConfigSchema } from './config.js';
import { WEBHOOK_ENTITIES, WEBHOOK_MIGRATIONS } from './database.js';
import { ResealSecrets } from './secrets/reseal-secrets.usecase.js';
import { SettingsSecrets } from './secrets/settings-secrets.js';

const USAGE = `Usage: npm run cli -- webhooks <command>

  webhooks reseal-secrets [--batch-size N]   seal every setting's credentials and signing secret again with
                                             the first key of WEBHOOK_SECRETS_KEYS, while the service keeps
                                             serving (DATABASE_URL, WEBHOOK_SECRETS_KEYS)

Rotation: add the new key last in WEBHOOK_SECRETS_KEYS on every replica, then move it first on every
replica, run reseal-secrets, then remove the old key once it says nothing needs it.`;

/** `npm run cli -- webhooks ...`; returns the exit code. */
export async function runWebhooksCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseServiceCommand(argv, ['batch-size'], USAGE);
  if (typeof parsed === 'number') return parsed;
  const { command, values } = parsed;
  if (command !== 'reseal-secrets') return fail(`Unknown command "webhooks ${command}"\n\n${USAGE}`);
  const batchSize = Number(values['batch-size'] ?? 500);
  if (!Number.isInteger(batchSize) || batchSize < 1) return fail('--batch-size must be a positive integer');
  let config;
  try {
    config = loadConfig(resealSecretsConfigSchema, env);
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message);
    throw error;
  }
  const dataSource = new DataSource(
    dataSourceOptions({
      url: config.DATABASE_URL,
      entities: WEBHOOK_ENTITIES,
      migrations: WEBHOOK_MIGRATIONS,
    }),
  );
  try {
    await dataSource.initialize();
  } catch (error) {
    return fail(`Cannot reach the database of DATABASE_URL: ${(error as Error).message}`);
  }
  try {
    const result = await new ResealSecrets(dataSource, new SettingsSecrets(config)).execute({
      batchSize,
      onBatch: (resealed) => console.log(`re-sealed ${resealed}`),
    });
    for (const { id, reason } of result.unopenable) console.error(`settings ${id}: ${reason}`);
    console.log(`Re-sealed ${result.resealed} settings.`);
    if (result.stillOld > 0) {
      return fail(
        `${result.stillOld} settings were still sealed with an older key on the last pass: is the new key first in ` +
          'WEBHOOK_SECRETS_KEYS on every replica? Run this again before removing a key.',
      );
    }
    if (result.unopenable.length > 0) {
      return fail(
        `${result.unopenable.length} settings (above) open with no key of WEBHOOK_SECRETS_KEYS: they were left as ` +
          'they are (their deliveries fail until the key that sealed them is configured again). Every other ' +
          'setting is sealed with the first key.',
      );
    }
    console.log(
      'Every setting is sealed with the first key of WEBHOOK_SECRETS_KEYS: the other keys can be removed.',
    );
    return 0;
  } finally {
    await dataSource.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  process.exit(await runWebhooksCli(process.argv.slice(2)));
