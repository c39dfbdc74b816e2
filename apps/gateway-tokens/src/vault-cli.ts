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
import { describeTokensByKek } from './vault/kek-usage.js';
import { KeyRing, newKekEntry } from './vault/key-ring.js';
import { rotateKek } from './vault/rotate-kek.js';

const USAGE = `Usage: npm run cli -- vault <command>

  vault rotate-kek [--batch-size N]   re-wrap every card's data key under the active KEK, while the
                                      vault keeps serving (DATABASE_URL, VAULT_KEKS, VAULT_ACTIVE_KEK);
                                      exit 1 when tokens are left under another KEK (it names them)
  vault new-kek --id <id>             print a new KEK entry (id:base64) to add to VAULT_KEKS

Rotation (docs/operations.md): add the new entry last in VAULT_KEKS and roll it out to every replica;
then make it VAULT_ACTIVE_KEK and roll out again; once every replica runs that, run rotate-kek; remove
the old key only after rotate-kek says nothing is left under it.`;

/** `npm run cli -- vault ...`; returns the exit code. */
export async function runVaultCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseServiceCommand(argv, ['batch-size', 'id'], USAGE);
  if (typeof parsed === 'number') return parsed;
  const { command, values } = parsed;
  if (command === 'new-kek') {
    if (!values.id) return fail('new-kek needs --id <id> (letters, digits, - and _)');
    try {
      console.log(newKekEntry(values.id));
    } catch (error) {
      return fail((error as Error).message);
    }
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
      onBatch: (p) => console.log(`re-wrapped ${p.rewrapped}, about ${p.remaining} left`),
    });
    if (result.remaining.size === 0) {
      console.log(`Every data key is wrapped by ${cipher.activeKekId} (${result.rewrapped} re-wrapped).`);
      return 0;
    }
    console.log(`Re-wrapped ${result.rewrapped} data keys under ${cipher.activeKekId}.`);
    const left = [
      `Not every data key is wrapped by ${cipher.activeKekId}; still under another KEK: ${describeTokensByKek(result.remaining)}.`,
    ];
    if (result.notConfigured.length > 0)
      left.push(
        `VAULT_KEKS does not list ${result.notConfigured.join(', ')}: run again with those keys listed.`,
      );
    if (result.unopenable.length > 0)
      left.push(
        `Their listed KEK does not open the data key (damaged, or another key under that id) of token(s) ${result.unopenable.slice(0, 20).join(', ')}` +
          `${result.unopenable.length > 20 ? ` and ${result.unopenable.length - 20} more` : ''}.`,
      );
    left.push('Keep every KEK they use in VAULT_KEKS (the vault will not start without it).');
    return fail(left.join('\n'));
  } finally {
    await dataSource.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(await runVaultCli(process.argv.slice(2)));
