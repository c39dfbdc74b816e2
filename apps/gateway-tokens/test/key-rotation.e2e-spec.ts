import { randomInt } from 'node:crypto';
import { jest } from '@jest/globals';
import { DataSource } from 'typeorm';
import { ConfigError, dataSourceOptions } from '@byrd/platform';
import { TOKENS_ENTITIES, TOKENS_MIGRATIONS } from '../src/database.js';
import { CardCipher } from '../src/vault/card-cipher.js';
import { KeyRing, newKekEntry, parseKeks } from '../src/vault/key-ring.js';
import { rotateKek } from '../src/vault/rotate-kek.js';
import { runVaultCli } from '../src/vault-cli.js';
import { TokensHarness, vaultKeys } from './harness.js';

/** A valid VISA number of its own (Luhn check digit computed). */
function visaNumber(): string {
  // A Visa BIN: a random 4xxxxx can be another network's (Naranja's 402918 is one we do not accept).
  const body = `424242${Array.from({ length: 9 }, () => randomInt(10)).join('')}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let digit = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

/**
 * `vault rotate-kek` while the vault is busy: every data key ends up under the new KEK, every card
 * still opens (also once the old key is gone), and the tokens written meanwhile are all there.
 */
describe('KEK rotation under load', () => {
  const k1 = newKekEntry('k1');
  const k2 = newKekEntry('k2');
  let h: TokensHarness;
  let db: DataSource;
  const cards = new Map<string, string>(); // tokenId → number

  beforeAll(async () => {
    h = await TokensHarness.start(vaultKeys([k1]));
    db = new DataSource(
      dataSourceOptions({
        url: h.tokensConfig.DATABASE_URL,
        entities: TOKENS_ENTITIES,
        migrations: TOKENS_MIGRATIONS,
      }),
    );
    await db.initialize();
  });
  afterAll(async () => {
    await db?.destroy();
    await h?.stop();
  });

  async function tokenize(count: number): Promise<void> {
    for (let i = 0; i < count; i += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, count - i) }, async () => {
          const number = visaNumber();
          const { status, body } = await h.createToken({
            number,
            eci: '05',
            aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=',
          });
          expect(status).toBe(201);
          cards.set(body.tokenId, number);
        }),
      );
    }
  }

  it('re-wraps every data key while tokens are created and charged, and loses none', async () => {
    await tokenize(300);
    // Step 1 of a rotation: every replica learns k2 and wraps new cards with it.
    await h.restartTokens(vaultKeys([k2, k1]));

    const rotation = rotateKek(db, new CardCipher(new KeyRing(parseKeks(`${k2},${k1}`), 'k2')), {
      batchSize: 25,
    });
    const charged = [...cards.keys()].slice(0, 60);
    const load = (async () => {
      await tokenize(150);
      for (const tokenId of charged) {
        const payment = await h.payWithToken(tokenId);
        expect({ tokenId, status: payment.body.status }).toEqual({ tokenId, status: 'Success' });
      }
    })();
    const [result] = await Promise.all([rotation, load]);
    expect(result.rewrapped).toBe(300);

    const [{ count }] = await db.query<{ count: number }[]>(`SELECT count(*)::int AS count FROM card_tokens`);
    expect(count).toBe(450);
    const stillOld = await db.query<unknown[]>(`SELECT id FROM card_tokens WHERE kek_id <> 'k2'`);
    expect(stillOld).toEqual([]);

    // Step 3: k1 retired. Every card opens with k2 alone, to the number it was created with.
    const onlyK2 = new CardCipher(new KeyRing(parseKeks(k2)));
    const rows = await db.query<
      { id: string; card_ciphertext: Buffer; wrapped_key: Buffer; kek_id: string }[]
    >(`SELECT id, card_ciphertext, wrapped_key, kek_id FROM card_tokens`);
    for (const row of rows) {
      const card = onlyK2.open(row.id, {
        ciphertext: row.card_ciphertext,
        wrappedKey: row.wrapped_key,
        kekId: row.kek_id,
      });
      expect(card.number).toBe(cards.get(row.id));
    }
    await h.restartTokens(vaultKeys([k2]));
    const payment = await h.payWithToken([...cards.keys()][0]);
    expect(payment.body.status).toBe('Success');
  });
});

/** `npm run cli -- vault ...` as an operator runs it: exit code, stdout and stderr. */
async function vaultCli(env: Record<string, string>, ...argv: string[]) {
  const out = jest.spyOn(console, 'log').mockImplementation(() => undefined);
  const err = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    const code = await runVaultCli(argv, env);
    return { code, out: out.mock.calls.join('\n'), err: err.mock.calls.join('\n') };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/**
 * The KEKs the stored tokens need: the vault does not start without one of them (a rolling deploy
 * that drops a key too early stalls, the old pods serving), and rotate-kek re-wraps what it can,
 * names what it cannot and says "done" only when it is.
 */
describe('KEKs in use', () => {
  const [k1, k2] = [newKekEntry('k1'), newKekEntry('k2')];
  let h: TokensHarness;
  let db: DataSource;
  const tokens: string[] = [];

  beforeAll(async () => {
    h = await TokensHarness.start(vaultKeys([k1]));
    db = new DataSource(
      dataSourceOptions({ url: h.tokensConfig.DATABASE_URL, entities: TOKENS_ENTITIES, migrations: [] }),
    );
    await db.initialize();
    for (let i = 0; i < 40; i += 20) {
      const created = await Promise.all(
        Array.from({ length: 20 }, () =>
          h.createToken({ number: visaNumber(), eci: '05', aav: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' }),
        ),
      );
      for (const { status, body } of created) {
        expect(status).toBe(201);
        tokens.push(body.tokenId);
      }
    }
  });
  afterAll(async () => {
    await db?.destroy();
    await h?.stop();
  });

  it('refuses to start without a KEK that tokens are wrapped by, naming it and how many', async () => {
    const refusal = await h.restartTokens(vaultKeys([k2])).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(ConfigError);
    expect((refusal as Error).message).toContain(
      'VAULT_KEKS does not list the key-encryption keys that stored card tokens are wrapped by (k1: 40 tokens)',
    );
    // Step 1 of a rotation, done right: both keys listed, the new one active. Old tokens still pay.
    await h.restartTokens(vaultKeys([k2, k1]));
    expect((await h.payWithToken(tokens[0])).body.status).toBe('Success');
  });

  it('re-wraps every other token beside one whose KEK is not configured, reports it, and is done after', async () => {
    const env = { DATABASE_URL: h.tokensConfig.DATABASE_URL, VAULT_KEKS: `${k2},${k1}` };
    const orphan = tokens[17];
    await db.query(`UPDATE card_tokens SET kek_id = 'k0' WHERE id = $1`, [orphan]);

    const partly = await vaultCli(env, 'rotate-kek', '--batch-size', '7');
    expect(partly.code).toBe(1);
    expect(partly.out).toContain('Re-wrapped 39 data keys under k2.');
    expect(partly.err).toContain(
      'Not every data key is wrapped by k2; still under another KEK: k0: 1 token.',
    );
    expect(partly.err).toContain('VAULT_KEKS does not list k0');
    const byKek = await db.query<{ kek_id: string; n: number }[]>(
      `SELECT kek_id, count(*)::int AS n FROM card_tokens GROUP BY kek_id ORDER BY kek_id`,
    );
    expect(byKek).toEqual([
      { kek_id: 'k0', n: 1 },
      { kek_id: 'k2', n: 39 },
    ]);

    // The missing key found (it was k1's all along): the rerun finishes the job and says so.
    await db.query(`UPDATE card_tokens SET kek_id = 'k1' WHERE id = $1`, [orphan]);
    const done = await vaultCli(env, 'rotate-kek', '--batch-size', '7');
    expect(done).toMatchObject({ code: 0, err: '' });
    expect(done.out).toContain('Every data key is wrapped by k2 (1 re-wrapped).');

    // Step 3: k1 retired; the vault starts and every token still pays.
    await h.restartTokens(vaultKeys([k2]));
    for (const tokenId of [orphan, tokens[0]])
      expect((await h.payWithToken(tokenId)).body.status).toBe('Success');
  });
});
