import { randomUUID } from 'node:crypto';
import { InboxMessage, insertAtomically, OutboxMessage, type RowToInsert } from '@byrd/platform';
import { MediumDatabase } from '@byrd/platform/testing';

/** insertAtomically's group commit on a real PostgreSQL: calls at once share statements, never rows. */
describe('insertAtomically (medium)', () => {
  let db: MediumDatabase;

  beforeAll(
    async () => (db = await MediumDatabase.create({ service: 'platform', entities: [], migrations: [] })),
  );
  afterAll(() => db?.close());

  const row = (id: string, subject: string): RowToInsert => ({
    target: OutboxMessage,
    entity: { id, subject, payload: { id, note: 'quote " backslash \\ done' } },
  });
  /** The transaction that wrote each event (rows one statement wrote share it). */
  const writers = async (ids: string[]) => {
    const rows = await db.dataSource.query<{ id: string; xmin: string; payload: { note: string } }[]>(
      `SELECT id, xmin::text AS xmin, payload FROM outbox WHERE id = ANY ($1::uuid[])`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r]));
  };

  it('writes calls made at once in fewer statements, each call whole and in one of them', async () => {
    const calls = Array.from({ length: 40 }, () => [randomUUID(), randomUUID()] as const);
    await Promise.all(calls.map(([a, b]) => insertAtomically(db.dataSource, [row(a, 'one'), row(b, 'two')])));

    const written = await writers(calls.flat());
    expect(written.size).toBe(80);
    expect(written.get(calls[7][0])?.payload.note).toBe('quote " backslash \\ done');
    for (const [a, b] of calls) expect(written.get(a)!.xmin).toBe(written.get(b)!.xmin);
    const statements = new Set([...written.values()].map((r) => r.xmin)).size;
    expect(statements).toBeLessThan(40);
  });

  it('fails only the call the database refuses; the calls written with it are committed', async () => {
    const handled = (eventId: string, subject: string): RowToInsert => ({
      target: InboxMessage,
      entity: { consumer: 'medium', eventId, subject },
    });
    const taken = randomUUID();
    await insertAtomically(db.dataSource, [handled(taken, 'first')]);
    const fresh = Array.from({ length: 20 }, () => randomUUID());
    const outcomes = await Promise.allSettled([
      ...fresh.slice(0, 10).map((id) => insertAtomically(db.dataSource, [handled(id, 'fresh')])),
      insertAtomically(db.dataSource, [handled(taken, 'again')]),
      ...fresh.slice(10).map((id) => insertAtomically(db.dataSource, [handled(id, 'fresh')])),
    ]);

    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([
      { status: 'rejected', reason: expect.objectContaining({ code: '23505' }) },
    ]);
    const rows = await db.dataSource.query<{ event_id: string; subject: string }[]>(
      `SELECT event_id, subject FROM inbox WHERE consumer = 'medium'`,
    );
    expect(rows).toHaveLength(21);
    expect(rows.find((r) => r.event_id === taken)?.subject).toBe('first');
  });
});
