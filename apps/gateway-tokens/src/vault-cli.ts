import 'reflect-metadata';
import { DataSource } from 'typeorm';
import {
  baseConfigSchema,
  dataSourceOptions,
  loadConfig,
  parseServiceCommand,
  refuseCommand as fail,
} from '@byrd/platform';
import { vaultKeysSchema } from './config.js';
import { TOKENS_ENTITIES, TOKENS_MIGRATIONS } from './database.js';
import { CardCipher } from './vault/card-cipher.js';
import { KeyRing, newKekEntry } from './vault/key-ring.js';
import { rotateKek } from './vault/rotate-kek.js';

const USAGE = `Usage: npm run cli -- vault <command>

  vault rotate-kek [--batch-size N]   re-wrap every card's data key under the active KEK, while the
                                      vault keeps serving (DATABASE_URL, VAULT_KEKS, VAULT_ACTIVE_KEK)
  vault new-kek --id <id>             print a new KEK entry (id:base64) to put first in VAULT_KEKS

Rotation: add the new key to VAULT_KEKS on every replica, make it VAULT_ACTIVE_KEK, run rotate-kek,
then remove the old key.`;

/** `npm run cli -- vault ...`; returns the exit code. */
export async function runVaultCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseServiceCommand(argv, ['batch-size', 'id'], USAGE);
  if (typeof parsed === 'number') return parsed;
  const { command, values } = parsed;
  if (command === 'new-kek') {
    if (!values.id) return fail('new-kek needs --id <id> (letters, digits, - and _)');
    console.log(newKekEntry(values.id));
    return 0;
  }
  if (command !== 'rotate-kek') return fail(`Unknown command "vault ${command}"\n\n${USAGE}`);
  const batchSize = Number(values['batch-size'] ?? 500);
  if (!Number.isInteger(batchSize) || batchSize < 1) return fail('--batch-size must be a positive integer');
  const config = loadConfig(baseConfigSchema.pick({ DATABASE_URL: true }).and(vaultKeysSchema), env);
  const cipher = new CardCipher(KeyRing.fromConfig(config));
  const dataSource = new DataSource(
    dataSourceOptions({ url: config.DATABASE_URL, entities: TOKENS_ENTITIES, migrations: TOKENS_MIGRATIONS }),
  );
  await dataSource.initialize();
  try {
    const result = await rotateKek(dataSource, cipher, {
      batchSize,
      onBatch: (p) => console.log(`re-wrapped ${p.rewrapped}, ${p.remaining} left`),
    });
    console.log(`Every data key is wrapped by ${cipher.activeKekId} (${result.rewrapped} re-wrapped).`);
    return 0;
  } finally {
    await dataSource.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await runVaultCli(process.argv.slice(2)));
