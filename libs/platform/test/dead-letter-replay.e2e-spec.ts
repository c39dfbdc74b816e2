import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { createEnvelope, type EventEnvelope } from '@byrd/contracts';
import {
  baseConfigSchema,
  dataSourceOptions,
  DUPLICATE_WINDOW_MS,
  EventConsumers,
  loadConfig,
  PermanentEventError,
  runMigrations,
} from '@byrd/platform';
import { TestEnvironment, type EventCollector } from '@byrd/platform/testing';

const CLI = fileURLToPath(new URL('../../../deploy/local/cli.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
/** The CLI's connections, as PostgreSQL names them (PGAPPNAME), so the test can watch them. */
const CLI_APP = 'dead-letters-replay';

/**
 * `npm run cli -- dead-letters replay --all` as operators run it: real processes, started together
 * or killed with SIGKILL before their commit, against the real PostgreSQL and JetStream, with the
 * consumer that set the letters aside running. Each letter must be handled once, none left behind.
 */
describe('dead-letters replay by real CLI processes', () => {
  let env: TestEnvironment;
  let config: ReturnType<typeof loadConfig<typeof baseConfigSchema>>;
  let dataSource: DataSource;
  let consumers: EventConsumers;
  let replays: EventCollector;
  let cliEnv: Record<string, string>;
  let broken = true;
  const durable = `replayed-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    // The consumer logs every letter it sets aside: thousands here.
    Logger.overrideLogger(false);
    if (!existsSync(BUILT))
      throw new Error(`${BUILT} is missing: run "npx turbo run build --filter=@byrd/platform" first`);
    env = await TestEnvironment.create();
    config = loadConfig(
      baseConfigSchema,
      await env.serviceEnv('platform', { OUTBOX_RELAY_ENABLED: 'false' }),
    );
    await runMigrations({ url: config.DATABASE_URL, entities: [], migrations: [] });
    dataSource = await new DataSource(
      dataSourceOptions({ url: config.DATABASE_URL, entities: [], migrations: [] }),
    ).initialize();
    // No key: a second handling of an event shows as a second row.
    await dataSource.query('CREATE TABLE replay_effects (event_id uuid NOT NULL)');
    consumers = new EventConsumers(dataSource, env.nats, config);
    consumers.register({
      durable,
      subject: 'order.>',
      async handle(envelope: EventEnvelope, manager: EntityManager) {
        if (broken) throw new PermanentEventError('a bug of this version');
        await manager.query('INSERT INTO replay_effects (event_id) VALUES ($1)', [envelope.id]);
      },
    });
    await consumers.onApplicationBootstrap();
    replays = await env.collect('order.>');
    cliEnv = {
      NATS_URL: config.NATS_URL,
      EVENTS_STREAM: config.EVENTS_STREAM,
      NATS_SUBJECT_PREFIX: config.NATS_SUBJECT_PREFIX,
      DATABASE_URL: config.DATABASE_URL,
      PGAPPNAME: CLI_APP,
    };
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await consumers?.beforeApplicationShutdown();
    await dataSource?.destroy();
    await env?.cleanup();
  });

  interface Letter {
    id: string;
    eventId: string;
  }

  /** `count` events the consumer cannot handle yet, dead-lettered by it; then its bug is fixed. */
  async function deadLetters(count: number): Promise<Letter[]> {
    broken = true;
    const ids = new Set<string>();
    for (let i = 0; i < count; i++) {
      const orderId = randomUUID();
      const envelope = createEnvelope('order.created', {
        merchantId: 'm-1',
        referenceIds: [orderId],
        data: {
          orderId,
          orderRef: null,
          status: 'created',
          paymentId: null,
          transactionId: null,
          amount: '1.00',
          currency: 'EUR',
        },
      });
      ids.add(envelope.id);
      await env.publish(envelope);
    }
    const letters = async () =>
      (
        await dataSource.query<{ id: string; payload: string }[]>(
          'SELECT id, payload FROM dead_letters WHERE consumer = $1',
          [durable],
        )
      )
        .map((row) => ({ id: row.id, eventId: (JSON.parse(row.payload) as EventEnvelope).id }))
        .filter((letter) => ids.has(letter.eventId));
    await until(`${count} dead letters`, async () => (await letters()).length === count);
    // Terminated for good: a terminate the broker ignored would bring each back after ack_wait,
    // to be set aside (and replayed) once more.
    await until(
      'the broker to let go of them',
      async () => (await env.nats.jsm.consumers.info(env.streamName, durable)).num_ack_pending === 0,
    );
    broken = false;
    return letters();
  }

  /** Polls `done`; fails at once, with its output, if one of `runs` ended meanwhile. */
  async function until(
    what: string,
    done: () => Promise<boolean> | boolean,
    timeoutMs = 30_000,
    runs: CliRun[] = [],
  ) {
    const deadline = Date.now() + timeoutMs;
    while (!(await done())) {
      const ended = runs.find((run) => run.ended() !== undefined);
      if (ended) throw new Error(`A run ended while waiting for ${what}: ${ended.ended()}`);
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
      await sleep(20);
    }
  }

  /** How many times the consumer committed each event's handling (0 when never). */
  async function handled(letters: Letter[]): Promise<Map<string, number>> {
    const rows = await dataSource.query<{ event_id: string; n: number }[]>(
      `SELECT event_id, count(*)::int AS n FROM replay_effects WHERE event_id = ANY($1::uuid[]) GROUP BY event_id`,
      [letters.map((l) => l.eventId)],
    );
    const counts = new Map(letters.map((l) => [l.eventId, 0]));
    for (const row of rows) counts.set(row.event_id, row.n);
    return counts;
  }

  /**
   * Waits until every letter's event was handled and the consumer has settled every message the
   * stream holds (none left to deliver, none waiting for its ack: a second copy would be among them),
   * then checks once each.
   */
  async function expectHandledOnceEach(letters: Letter[]): Promise<void> {
    await until('every replayed event to be handled', async () =>
      [...(await handled(letters)).values()].every((n) => n >= 1),
    );
    await until('the consumer to settle every message in the stream', async () => {
      const { num_pending, num_ack_pending } = await env.nats.jsm.consumers.info(env.streamName, durable);
      return num_pending === 0 && num_ack_pending === 0;
    });
    const twice = [...(await handled(letters))].filter(([, n]) => n !== 1);
    expect(twice).toEqual([]);
  }

  async function remaining(letters: Letter[]): Promise<string[]> {
    const rows = await dataSource.query<{ id: string }[]>(
      'SELECT id FROM dead_letters WHERE id = ANY($1::bigint[]) ORDER BY id',
      [letters.map((l) => l.id)],
    );
    return rows.map((r) => r.id);
  }

  /** The replays of these letters in the stream (the collector caught up with its last message). */
  async function inStream(letters: Letter[]): Promise<Map<string, number>> {
    const { last_seq } = (await env.nats.jsm.streams.info(env.streamName)).state;
    await until('the collector to read the stream', () => (replays.events.at(-1)?.seq ?? 0) >= last_seq);
    const counts = new Map(letters.map((l) => [l.id, 0]));
    for (const { msgId } of replays.events) {
      const id = /^dead-letter:[^:]+:(\d+):/.exec(msgId ?? '')?.[1];
      if (id && counts.has(id)) counts.set(id, counts.get(id)! + 1);
    }
    return counts;
  }

  interface CliRun {
    kill: () => void;
    /** Its exit code and output once it has ended. */
    ended: () => string | undefined;
    exited: Promise<{ code: number | null; output: string }>;
  }
  /** Killed in afterAll if a failed test left them waiting. */
  const children = new Set<ChildProcess>();

  function startCli(...argv: string[]): CliRun {
    const child = spawn(process.execPath, [CLI, ...argv], {
      env: { PATH: process.env.PATH, ...cliEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let output = '';
    let ended: string | undefined;
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    return {
      kill: () => child.kill('SIGKILL'),
      ended: () => ended,
      exited: new Promise((resolve) =>
        child.once('exit', (code) => {
          children.delete(child);
          ended = `exit ${code}: ${output}`;
          resolve({ code, output });
        }),
      ),
    };
  }

  /** The ids a run says it replayed (`Replayed n: id (subject), ...`). */
  const replayedBy = (output: string) =>
    [...(/^Replayed \d+: (.*)$/m.exec(output)?.[1] ?? '').matchAll(/(\d+) \(/g)].map((m) => m[1]);

  /** How many letters a run passed by because another run held them. */
  const heldBy = (output: string) =>
    Number(/^(\d+) dead letters held by another run/m.exec(output)?.[1] ?? 0);

  /** A connection of the test's own, to hold a lock on `dead_letters` while CLI processes run. */
  async function holdLock(mode: string): Promise<{ release: () => Promise<void> }> {
    const holder = new pg.Client({ connectionString: config.DATABASE_URL });
    await holder.connect();
    await holder.query(`BEGIN; LOCK TABLE dead_letters IN ${mode} MODE`);
    return {
      release: async () => {
        await holder.query('ROLLBACK');
        await holder.end();
      },
    };
  }

  /** The CLI's backends waiting for a lock, with the statement each waits in. */
  const cliWaiting = () =>
    dataSource.query<{ pid: number; query: string }[]>(
      `SELECT pid, query FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`,
      [CLI_APP],
    );
  /** Whether a run waits at its delete: it has published, and not committed. */
  const atDelete = async () =>
    (await cliWaiting()).some((b) => b.query.startsWith('DELETE FROM dead_letters'));
  /** Whether PostgreSQL still has a backend of a CLI process (a killed one's lingers until it notices). */
  const cliConnected = async () =>
    (
      await dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
        [CLI_APP],
      )
    )[0].n > 0;

  it('two replay --all runs at once, many rounds: each letter replayed by one run only, handled once, none left', async () => {
    const ROUNDS = 9;
    const LETTERS = 40;
    let overlapped = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const letters = await deadLetters(LETTERS);
      const mode = (['start line', 'second during first', 'free'] as const)[round % 3];
      let runs: CliRun[];
      if (mode === 'start line') {
        // Both held at a start line (the table locked against them) and let go together.
        const startLine = await holdLock('ACCESS EXCLUSIVE');
        runs = [startCli('dead-letters', 'replay', '--all'), startCli('dead-letters', 'replay', '--all')];
        try {
          await until(
            'both runs at the start line',
            async () => (await cliWaiting()).length === 2,
            30_000,
            runs,
          );
        } finally {
          await startLine.release();
        }
      } else if (mode === 'second during first') {
        // The second starts while the first, held at its delete, has published and not committed.
        const deleteHeld = await holdLock('SHARE');
        runs = [startCli('dead-letters', 'replay', '--all')];
        try {
          await until('the first run to wait at its delete', atDelete, 30_000, runs);
          runs.push(startCli('dead-letters', 'replay', '--all'));
          await until(
            'the second run to wait too',
            async () => (await cliWaiting()).length === 2,
            30_000,
            runs,
          );
        } finally {
          await deleteHeld.release();
        }
      } else {
        // As two operators would start them.
        runs = [startCli('dead-letters', 'replay', '--all'), startCli('dead-letters', 'replay', '--all')];
      }
      const [a, b] = await Promise.all(runs.map((run) => run.exited));
      const [byA, byB] = [replayedBy(a.output), replayedBy(b.output)];
      // Never both: a letter sent by two runs would reach the consumer twice after the duplicate window.
      expect(byA.filter((id) => byB.includes(id))).toEqual([]);
      expect([...byA, ...byB].sort()).toEqual(letters.map((l) => l.id).sort());
      expect(await remaining(letters)).toEqual([]);
      await expectHandledOnceEach(letters);
      expect([...(await inStream(letters)).values()].every((n) => n === 1)).toBe(true);
      // A run that passed letters by says so (exit 1), never that there are none.
      for (const run of [a, b]) expect(run.code).toBe(heldBy(run.output) > 0 ? 1 : 0);
      if (mode === 'second during first') expect([byB.length, heldBy(b.output)]).toEqual([0, LETTERS]);
      if (
        mode === 'start line' &&
        ((byA.length > 0 && byB.length > 0) || heldBy(a.output) + heldBy(b.output) > 0)
      )
        overlapped++;
    }
    // The start line did make the runs meet (else those rounds would be runs one after the other).
    expect(overlapped).toBeGreaterThan(0);
  }, 300_000);

  it('a run killed (SIGKILL) at its delete, after publishing, before the commit: the letters stay; the next run leaves none, each handled once', async () => {
    const letters = await deadLetters(50);
    // Its delete waits for this lock (its SELECT … FOR UPDATE does not): the run is held exactly
    // between its last publish and its commit.
    const lock = await holdLock('SHARE');
    const killed = startCli('dead-letters', 'replay', '--all');
    let meanwhile: CliRun;
    try {
      await until('the run to wait at its delete', atDelete, 30_000, [killed]);
      expect([...(await inStream(letters)).values()].every((n) => n === 1)).toBe(true);
      killed.kill();
      expect((await killed.exited).code).toBeNull();
      // Run again at once: the killed run's session still holds its letters (as a vanished
      // machine's does until PostgreSQL notices), so this run passes them by.
      meanwhile = startCli('dead-letters', 'replay', '--all');
      await until(
        'the second run to reach its delete',
        async () => (await cliWaiting()).length === 2,
        30_000,
        [meanwhile],
      );
    } finally {
      await lock.release();
    }
    // It must not answer that there are none.
    const passedBy = await meanwhile.exited;
    expect(passedBy.code).toBe(1);
    expect(passedBy.output).toContain(`${letters.length} dead letters held by another run`);
    expect(replayedBy(passedBy.output)).toEqual([]);

    await until('PostgreSQL to roll the killed run back', async () => !(await cliConnected()));
    expect(await remaining(letters)).toEqual(letters.map((l) => l.id).sort((x, y) => Number(x) - Number(y)));
    // The consumer handled what the killed run had published.
    await expectHandledOnceEach(letters);

    const again = await startCli('dead-letters', 'replay', '--all').exited;
    expect(again.code).toBe(0);
    expect(replayedBy(again.output).sort()).toEqual(letters.map((l) => l.id).sort());
    expect(await remaining(letters)).toEqual([]);
    // Published again within the stream's duplicate window: JetStream dropped every copy.
    expect([...(await inStream(letters)).values()].every((n) => n === 1)).toBe(true);
    await expectHandledOnceEach(letters);
  }, 120_000);

  it('a run killed (SIGKILL) mid-run, wherever the kill lands, many rounds: no letter is lost or handled twice', async () => {
    const ROUNDS = 3;
    const LETTERS = 300;
    let midRun = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const letters = await deadLetters(LETTERS);
      const ofRound = new Set(letters.map((l) => `dead-letter:${durable}:${l.id}:`));
      const isReplay = (msgId = '') => ofRound.has(msgId.slice(0, msgId.lastIndexOf(':') + 1));
      const killed = startCli('dead-letters', 'replay', '--all');
      // Killed as soon as its first replay reaches the stream: while it is still publishing.
      await until('the run to publish', () => replays.events.some((e) => isReplay(e.msgId)), 60_000, [
        killed,
      ]);
      killed.kill();
      expect((await killed.exited).code).toBeNull();
      await until('PostgreSQL to drop the killed run', async () => !(await cliConnected()));

      // Whatever point it reached, every letter is still set aside or already published.
      const published = await inStream(letters);
      const left = await remaining(letters);
      const lost = letters.filter((l) => !left.includes(l.id) && published.get(l.id) === 0);
      expect(lost).toEqual([]);
      const sent = [...published.values()].filter((n) => n > 0).length;
      // One transaction: either none deleted (killed before its commit) or all, all published.
      expect([0, LETTERS]).toContain(left.length);
      if (left.length === 0) expect(sent).toBe(LETTERS);
      if (sent < LETTERS) midRun++;

      const again = await startCli('dead-letters', 'replay', '--all').exited;
      expect(again.code).toBe(0);
      expect(await remaining(letters)).toEqual([]);
      expect([...(await inStream(letters)).values()].every((n) => n === 1)).toBe(true);
      await expectHandledOnceEach(letters);
    }
    // Some kill did land while it was publishing (the state this test is about).
    expect(midRun).toBeGreaterThan(0);
  }, 300_000);

  it('a run killed before its commit and run again after the duplicate window: the consumer’s inbox drops the second copy', async () => {
    const WINDOW_MS = 1_000;
    const setWindow = async (ms: number) => {
      const { config: stream } = await env.nats.jsm.streams.info(env.streamName);
      await env.nats.jsm.streams.update(env.streamName, { ...stream, duplicate_window: ms * 1e6 });
    };
    const letters = await deadLetters(30);
    await setWindow(WINDOW_MS);
    try {
      const lock = await holdLock('SHARE');
      const killed = startCli('dead-letters', 'replay', '--all');
      try {
        await until('the run to wait at its delete', atDelete, 30_000, [killed]);
        killed.kill();
        await killed.exited;
      } finally {
        await lock.release();
      }
      await until('PostgreSQL to roll the killed run back', async () => !(await cliConnected()));
      expect(await remaining(letters)).toHaveLength(letters.length);
      await expectHandledOnceEach(letters);
      const duplicates = consumers.counters.duplicates;

      await sleep(WINDOW_MS * 2.5);
      const again = await startCli('dead-letters', 'replay', '--all').exited;
      expect(again.code).toBe(0);
      expect(await remaining(letters)).toEqual([]);
      // The stream took every copy this time; the consumer handled none of them a second time.
      expect([...(await inStream(letters)).values()].every((n) => n === 2)).toBe(true);
      const { last_seq } = (await env.nats.jsm.streams.info(env.streamName)).state;
      await until(
        'the consumer to acknowledge the second copies',
        async () =>
          (await env.nats.jsm.consumers.info(env.streamName, durable)).ack_floor.stream_seq >= last_seq,
      );
      await expectHandledOnceEach(letters);
      expect(consumers.counters.duplicates - duplicates).toBe(letters.length);
    } finally {
      await setWindow(DUPLICATE_WINDOW_MS);
    }
  }, 120_000);
});
