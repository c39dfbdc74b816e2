export interface GroupCommitOptions<I = unknown> {
  /** Most items one write carries. */
  maxBatch: number;
  /** Writes running at once; items arriving meanwhile wait and go together in the next one. */
  maxInFlight: number;
  /**
   * The row an item changes, when a statement may change each row only once (an UPDATE … FROM
   * moves a row by whichever of its input rows it joins first): an item whose key is in the batch
   * being gathered or in a write in flight waits for that write, and is written after it, on what
   * it left, as it would be alone. The items behind it wait with it (arrival order is kept).
   */
  keyOf?: (item: I) => unknown;
}

interface Waiting<I, O> {
  item: I;
  resolve: (result: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: items submitted in the same turn of the event loop, or while the writes in flight
 * run, are written together next, as one statement, so under load one round trip and one commit
 * carry many requests; alone, an item waits only for the end of the turn (`setImmediate`, no timer).
 * Every caller still waits for its own item's write to commit.
 *
 * `write` gets a batch and answers one result per item, in order. It must be one statement (atomic):
 * when a batch of several is refused for its data (`refusesRows`) or aborted to break a deadlock
 * (`deadlocked`), nothing of it was written, and its items are written again one by one, in the order
 * they arrived, so an item the database refuses fails only its own caller. Any other failure (the connection, the server) fails the whole batch as
 * it is: the statement may even have committed, and writing it again would not be the same.
 */
export class GroupCommit<I, O> {
  private readonly queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private flushScheduled = false;
  private readonly keysInFlight = new Set<unknown>();

  constructor(
    private readonly write: (batch: I[]) => Promise<O[]>,
    private readonly options: GroupCommitOptions<I>,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.flushScheduled) return;
      // At the end of this turn: the other requests whose I/O this turn handles join the batch.
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.next();
      });
    });
  }

  private next(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const { batch, keys } = this.take();
      // The first waiting item's key is being written: it goes once that write is done.
      if (batch.length === 0) return;
      this.inFlight += 1;
      void this.run(batch).finally(() => {
        for (const key of keys) this.keysInFlight.delete(key);
        this.inFlight -= 1;
        this.next();
      });
    }
  }

  /** The next batch, in arrival order, up to the first item whose key is taken (see `keyOf`). */
  private take(): { batch: Waiting<I, O>[]; keys: Set<unknown> } {
    const { keyOf, maxBatch } = this.options;
    if (!keyOf) return { batch: this.queue.splice(0, maxBatch), keys: new Set() };
    const keys = distinctKeysAhead(this.queue, maxBatch, (waiting) => keyOf(waiting.item), this.keysInFlight);
    for (const key of keys) this.keysInFlight.add(key);
    return { batch: this.queue.splice(0, keys.size), keys };
  }

  private async run(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await this.write(batch.map((waiting) => waiting.item));
      batch.forEach((waiting, i) => waiting.resolve(results[i]));
    } catch (error) {
      if (batch.length === 1 || !(refusesRows(error) || deadlocked(error)))
        return batch.forEach((waiting) => waiting.reject(error));
      for (const waiting of batch) await this.run([waiting]);
    }
  }
}

/**
 * The keys of the items at the front of `items` (at most `most`) up to the first whose key repeats
 * one before it or is `taken`: those items, `size` of them, can share one statement that changes
 * each key's row once.
 */
export function distinctKeysAhead<T>(
  items: readonly T[],
  most: number,
  keyOf: (item: T) => unknown,
  taken: ReadonlySet<unknown> = new Set(),
): Set<unknown> {
  const keys = new Set<unknown>();
  for (const item of items.slice(0, most)) {
    const key = keyOf(item);
    if (keys.has(key) || taken.has(key)) break;
    keys.add(key);
  }
  return keys;
}

/**
 * Whether PostgreSQL refused the statement for the rows it carried (SQLSTATE classes 22, data
 * exception, and 23, integrity constraint violation): nothing was written, and the rows of other
 * callers may well be fine alone.
 */
export function refusesRows(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * Whether PostgreSQL broke a deadlock by aborting the statement (SQLSTATE 40P01): nothing of it was
 * written. A batch locks several rows, so it can meet another statement taking some of the same
 * rows in another order (a batch of idempotency claims and one of answers, say); one item at a time
 * holds one row and cannot.
 */
export function deadlocked(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '40P01';
}

/**
 * A batch's rows of values as one array per column: the parameters of a statement that reads
 * them with `unnest($1::type[], $2::type[], …)`.
 */
export function columnsOf(rows: readonly (readonly unknown[])[]): unknown[][] {
  return rows[0].map((_, column) => rows.map((row) => row[column]));
}
