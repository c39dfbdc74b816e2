import type { DataSource } from 'typeorm';
import type { MediumDatabase } from '@byrd/platform/testing';
import { CardCipher } from '../src/vault/card-cipher.js';
import { KeyRing, newKekEntry, parseKeks } from '../src/vault/key-ring.js';
import { rotateKek } from '../src/vault/rotate-kek.js';
import { cardTokenReads, closeVaultDatabase, insertTokens, vaultDatabase } from './vault-rows.js';

const ROWS = 50_000;

/**
 * `vault rotate-kek` on a large vault: each batch is an index range after the last id it re-wrapped,
 * so a rotation reads about what it re-wraps, not the table once per batch (quadratic); and two
 * rotations at once share the work.
 */
describe('KEK rotation of a large vault', () => {
  const [k1, k2, k3] = [newKekEntry('k1'), newKekEntry('k2'), newKekEntry('k3')];
  let db: MediumDatabase;
  /** One connection: its table statistics are flushed on request (pg_stat_force_next_flush). */
  let session: DataSource;

  beforeAll(async () => {
    ({ db, session } = await vaultDatabase());
    await insertTokens(session, new CardCipher(new KeyRing(parseKeks(k1))), ROWS);
  }, 120_000);
  afterAll(() => closeVaultDatabase({ db, session }));

  const tuplesRead = (expectUpdated: number) => cardTokenReads(session, db.dataSource, expectUpdated);

  it('reads each row about once, whatever the number of batches', async () => {
    const before = await tuplesRead(0);
    const started = Date.now();
    const result = await rotateKek(session, new CardCipher(new KeyRing(parseKeks(`${k2},${k1}`))), {
      batchSize: 500,
    });
    const elapsedMs = Date.now() - started;
    expect(result.rewrapped).toBe(ROWS);
    const after = await tuplesRead(before.updated + ROWS);
    expect(after.updated - before.updated).toBe(ROWS);
    const read = after.read - before.read;
    console.log(`rotate-kek of ${ROWS} rows in batches of 500: ${elapsedMs} ms, ${read} rows read`);
    // A count of what is left (once), each batch's rows, each update's look-up: 3 per row. One read
    // of the table per batch instead (100 batches) would be 50 times that.
    expect(read).toBeLessThan(5 * ROWS);
  });

  it('shares the work between two rotations at once, which skip the rows the other holds', async () => {
    const cipher = new CardCipher(new KeyRing(parseKeks(`${k3},${k2}`)));
    const both = await Promise.all([
      rotateKek(db.dataSource, cipher, { batchSize: 200 }),
      rotateKek(db.dataSource, cipher, { batchSize: 200 }),
    ]);
    expect(both[0].rewrapped + both[1].rewrapped).toBe(ROWS);
    expect(both.map((r) => r.remaining.size)).toEqual([0, 0]);
    const [{ left }] = await db.dataSource.query<{ left: number }[]>(
      `SELECT count(*)::int AS left FROM card_tokens WHERE kek_id <> 'k3'`,
    );
    expect(left).toBe(0);
    const onlyK3 = new CardCipher(new KeyRing(parseKeks(k3)));
    const sample = await db.dataSource.query<{ id: string; card_ciphertext: Buffer; wrapped_key: Buffer }[]>(
      `SELECT id, card_ciphertext, wrapped_key FROM card_tokens ORDER BY random() LIMIT 20`,
    );
    for (const row of sample) {
      const card = onlyK3.open(row.id, {
        ciphertext: row.card_ciphertext,
        wrappedKey: row.wrapped_key,
        kekId: 'k3',
      });
      expect(card.number).toBe('4242424242424242');
    }
  });
});
