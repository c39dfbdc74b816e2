import type { DataSource } from 'typeorm';
import type { MediumDatabase } from '@byrd/platform/testing';
import { ListTokens } from '../src/tokens/token-queries.usecases.js';
import { CardCipher } from '../src/vault/card-cipher.js';
import { KeyRing, newKekEntry, parseKeks } from '../src/vault/key-ring.js';
import { cardTokenReads, closeVaultDatabase, insertTokens, vaultDatabase } from './vault-rows.js';

const ROWS = 20_000;

/**
 * `GET /api/v2/tokens` without a `customReference` on a large vault: a page is an index range of
 * the merchant's newest tokens, not a read and sort of its whole vault per page.
 */
describe('token list of a large vault', () => {
  let db: MediumDatabase;
  /** One connection: its table statistics are flushed on request. */
  let session: DataSource;

  beforeAll(async () => {
    ({ db, session } = await vaultDatabase());
    const cipher = new CardCipher(new KeyRing(parseKeks(newKekEntry('k1'))));
    await insertTokens(session, cipher, ROWS, 'm-large');
    await insertTokens(session, cipher, 500, 'm-other');
    // As autovacuum leaves a table that has settled: statistics, and every page all-visible. A VACUUM
    // that meets an older snapshot (a loaded machine's other sessions) leaves pages an index-only
    // scan must fetch, which the reads below would count: it is run again until none is left.
    for (let tries = 0; ; tries++) {
      await session.query(`VACUUM ANALYZE card_tokens`);
      const [{ pages, visible }] = await session.query<{ pages: number; visible: number }[]>(
        `SELECT relpages AS pages, relallvisible AS visible FROM pg_class WHERE relname = 'card_tokens'`,
      );
      if (visible >= pages || tries === 50) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 120_000);
  afterAll(() => closeVaultDatabase({ db, session }));

  /** A page of m-large's tokens, and how many table rows reading it took. */
  async function listed(query: { pageNumber: number; pageSize: number }) {
    const before = await cardTokenReads(session, db.dataSource);
    const page = await new ListTokens(session).execute('m-large', query);
    return { page, read: (await cardTokenReads(session, db.dataSource)).read - before.read };
  }

  it('reads about a page of rows for a page, not the whole vault of the merchant', async () => {
    const { page, read } = await listed({ pageNumber: 1, pageSize: 20 });
    expect(page.data).toHaveLength(20);
    expect(page.pagination).toMatchObject({ pageNumber: 1, pageSize: 20, totalAvailable: ROWS });
    expect(read).toBeGreaterThanOrEqual(20); // the page's rows themselves: the counts did move
    expect(read).toBeLessThan(1_000);
  });

  it('reads about a page of rows for a page deep in the list, not every row before it', async () => {
    const { page, read } = await listed({ pageNumber: 190, pageSize: 100 });
    expect(page.data).toHaveLength(100);
    expect(page.pagination).toMatchObject({ pageNumber: 190, totalAvailable: ROWS });
    // The 18,901st to 19,000th newest, newest first, as the table orders them.
    const expected = await db.dataSource.query<{ id: string }[]>(
      `SELECT id FROM card_tokens WHERE merchant_id = 'm-large'
        ORDER BY created_at DESC, id OFFSET 18900 LIMIT 100`,
    );
    expect(page.data.map((token) => token.tokenId)).toEqual(expected.map((row) => row.id));
    expect(read).toBeGreaterThanOrEqual(100);
    expect(read).toBeLessThan(1_000);
  });
});
