import { GroupCommit } from './group-commit.js';

/** A write whose batches the test finishes by hand, to hold items in flight. */
class HeldWrites {
  readonly batches: number[][] = [];
  private readonly pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  refuse = new Set<number>();
  connectionLost = false;

  readonly write = (batch: number[]): Promise<string[]> => {
    this.batches.push(batch);
    return new Promise<void>((resolve, reject) => this.pending.push({ resolve, reject })).then(() => {
      if (this.connectionLost) throw new Error('Connection terminated unexpectedly');
      const refused = batch.find((item) => this.refuse.has(item));
      if (refused !== undefined) throw Object.assign(new Error(`refused ${refused}`), { code: '23505' });
      return batch.map((item) => `written ${item}`);
    });
  };

  /** Lets the oldest unfinished write finish (and the turn after it run). */
  async finishNext(): Promise<void> {
    this.pending.shift()!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('writes the items of one turn together, and those arriving during the write together next', async () => {
    const writes = new HeldWrites();
    const group = new GroupCommit(writes.write, { maxBatch: 10, maxInFlight: 1 });
    const first = [1, 2].map((item) => group.submit(item));
    expect(writes.batches).toEqual([]);
    await endOfTurn();
    expect(writes.batches).toEqual([[1, 2]]);
    const rest = [3, 4, 5].map((item) => group.submit(item));
    await endOfTurn();
    expect(writes.batches).toEqual([[1, 2]]);
    await writes.finishNext();
    await expect(Promise.all(first)).resolves.toEqual(['written 1', 'written 2']);
    expect(writes.batches).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    await writes.finishNext();
    await expect(Promise.all(rest)).resolves.toEqual(['written 3', 'written 4', 'written 5']);
  });

  it('never writes two items of one key together: the second waits for the first write', async () => {
    const writes = new HeldWrites();
    const group = new GroupCommit(writes.write, { maxBatch: 10, maxInFlight: 2, keyOf: (item) => item % 10 });
    const results = [1, 11, 2].map((item) => group.submit(item));
    await endOfTurn();
    // 11 changes what 1 changes; 2 keeps its place behind 11, though a second write could run.
    expect(writes.batches).toEqual([[1]]);
    await writes.finishNext();
    expect(writes.batches).toEqual([[1], [11, 2]]);
    const more = [3, 21].map((item) => group.submit(item));
    await endOfTurn();
    // 3 runs beside the write in flight; 21 waits for 11's.
    expect(writes.batches).toEqual([[1], [11, 2], [3]]);
    await writes.finishNext();
    expect(writes.batches).toEqual([[1], [11, 2], [3], [21]]);
    await writes.finishNext();
    await writes.finishNext();
    await expect(Promise.all([...results, ...more])).resolves.toEqual([
      'written 1',
      'written 11',
      'written 2',
      'written 3',
      'written 21',
    ]);
  });

  it('writes an item alone at the end of its turn', async () => {
    const writes = new HeldWrites();
    const group = new GroupCommit(writes.write, { maxBatch: 10, maxInFlight: 1 });
    const alone = group.submit(1);
    await endOfTurn();
    expect(writes.batches).toEqual([[1]]);
    await writes.finishNext();
    await expect(alone).resolves.toBe('written 1');
  });

  it('keeps to the most items per write and writes at once', async () => {
    const writes = new HeldWrites();
    const group = new GroupCommit(writes.write, { maxBatch: 2, maxInFlight: 2 });
    const all = [1, 2, 3, 4, 5, 6, 7].map((item) => group.submit(item));
    await endOfTurn();
    expect(writes.batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    await writes.finishNext();
    expect(writes.batches).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    await writes.finishNext();
    await writes.finishNext();
    expect(writes.batches).toEqual([[1, 2], [3, 4], [5, 6], [7]]);
    await writes.finishNext();
    await expect(Promise.all(all)).resolves.toHaveLength(7);
  });

  it('writes a batch refused for its rows again item by item, in order: only the refused item fails', async () => {
    const writes = new HeldWrites();
    writes.refuse.add(3);
    const group = new GroupCommit(writes.write, { maxBatch: 10, maxInFlight: 1 });
    const batch = Promise.allSettled([2, 3, 4].map((item) => group.submit(item)));
    await endOfTurn();
    await writes.finishNext(); // [2, 3, 4] is refused as a whole
    expect(writes.batches).toEqual([[2, 3, 4], [2]]);
    await writes.finishNext();
    expect(writes.batches).toEqual([[2, 3, 4], [2], [3]]);
    await writes.finishNext();
    await writes.finishNext();
    expect(writes.batches).toEqual([[2, 3, 4], [2], [3], [4]]);
    const settled = await batch;
    expect(settled.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({
      message: 'refused 3',
      code: '23505',
    });
  });

  it('writes a batch the database aborted to break a deadlock again item by item: none fails', async () => {
    const writes = new HeldWrites();
    let deadlocks = 1;
    const group = new GroupCommit(
      (batch: number[]) =>
        batch.length > 1 && deadlocks-- > 0
          ? Promise.reject(Object.assign(new Error('deadlock detected'), { code: '40P01' }))
          : writes.write(batch),
      { maxBatch: 10, maxInFlight: 1 },
    );
    const batch = Promise.allSettled([1, 2, 3].map((item) => group.submit(item)));
    await endOfTurn();
    for (let i = 0; i < 3; i++) await writes.finishNext();
    expect(writes.batches).toEqual([[1], [2], [3]]);
    expect((await batch).map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
  });

  it('fails a whole batch, without writing it again, when the failure is not its rows', async () => {
    const writes = new HeldWrites();
    writes.connectionLost = true;
    const group = new GroupCommit(writes.write, { maxBatch: 10, maxInFlight: 1 });
    const batch = Promise.allSettled([1, 2, 3].map((item) => group.submit(item)));
    await endOfTurn();
    await writes.finishNext();
    const settled = await batch;
    expect(settled.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(writes.batches).toEqual([[1, 2, 3]]);
  });

  it('goes on writing after a failure', async () => {
    const writes = new HeldWrites();
    writes.refuse.add(1);
    const group = new GroupCommit(writes.write, { maxBatch: 10, maxInFlight: 1 });
    const refused = group.submit(1);
    await endOfTurn();
    await writes.finishNext();
    await expect(refused).rejects.toThrow('refused 1');
    const next = group.submit(2);
    await endOfTurn();
    await writes.finishNext();
    await expect(next).resolves.toBe('written 2');
  });
});
