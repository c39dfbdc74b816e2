import { EndpointScheduler, MAX_COOLDOWN_FACTOR, type SchedulerSettings } from './endpoint-scheduler.js';

const SETTINGS: SchedulerSettings = {
  concurrency: 64,
  endpointConcurrency: 64,
  breakerFailures: 3,
  breakerCooldownMs: 1_000,
  unopenableRetryMs: 5_000,
};
const T0 = 1_000_000;

function scheduler(overrides: Partial<SchedulerSettings> = {}) {
  return new EndpointScheduler({ ...SETTINGS, ...overrides });
}

/** Allocates and claims as the worker does, with every endpoint having `available` rows due. */
function claimRound(s: EndpointScheduler, free: number, now: number, available: Record<string, number> = {}) {
  const allocation = s.allocate(free, now);
  const got: Record<string, number> = {};
  for (const [id, asked] of allocation.rows) {
    got[id] = Math.min(asked, available[id] ?? Infinity);
    s.claimed(id, asked, got[id], allocation, now);
  }
  return got;
}

describe('EndpointScheduler: fair shares', () => {
  it('gives an endpoint alone every free slot, within WEBHOOK_ENDPOINT_CONCURRENCY', () => {
    const s = scheduler();
    s.hint(['a'], T0);
    expect(claimRound(s, 64, T0)).toEqual({ a: 64 });

    const capped = scheduler({ endpointConcurrency: 8 });
    capped.hint(['a'], T0);
    expect(claimRound(capped, 64, T0)).toEqual({ a: 8 });
    // At its cap it gets nothing more until one of its deliveries finishes.
    expect(claimRound(capped, 56, T0)).toEqual({});
    capped.finished('a', true, T0);
    expect(claimRound(capped, 57, T0)).toEqual({ a: 1 });
  });

  it('holds an endpoint that fills its share (a receiver that hangs) to it, and serves the others beside it', () => {
    const s = scheduler();
    s.hint(['slow'], T0);
    expect(claimRound(s, 64, T0)).toEqual({ slow: 64 });
    // Its 64 hang; as they time out one by one, a second endpoint with work appears.
    for (let i = 0; i < 40; i++) s.finished('slow', true, T0);
    s.hint(['fast'], T0);
    // Two contenders: 32 each. slow still has 24 in flight, so it may take 8 more; fast takes 32.
    expect(claimRound(s, 40, T0)).toEqual({ slow: 8, fast: 32 });
    expect(claimRound(s, 0, T0)).toEqual({});
  });

  it('shares few free slots round the endpoints, starting elsewhere each time', () => {
    const s = scheduler();
    const ids = ['a', 'b', 'c', 'd'];
    const served = new Map(ids.map((id) => [id, 0]));
    for (let round = 0; round < 8; round++) {
      s.hint(ids, T0);
      const got = claimRound(s, 2, T0);
      for (const [id, n] of Object.entries(got)) {
        served.set(id, served.get(id)! + n);
        s.finished(id, true, T0);
      }
    }
    expect([...served.values()]).toEqual([4, 4, 4, 4]);
  });

  it('forgets what it claimed to the end: a claim that got fewer than asked leaves the endpoint drained', () => {
    const s = scheduler();
    s.hint(['a'], T0);
    expect(claimRound(s, 10, T0, { a: 3 })).toEqual({ a: 3 });
    expect(claimRound(s, 7, T0)).toEqual({});
    expect(s.nextDueAt(T0)).toBeNull();
  });

  it('keeps a hint that came while the claim ran (the claim may not have seen those rows)', () => {
    const s = scheduler();
    s.hint(['a'], T0);
    const allocation = s.allocate(10, T0);
    s.hint(['a'], T0 + 1); // committed while the claim statement ran
    s.claimed('a', 10, 2, allocation, T0 + 2);
    expect(claimRound(s, 8, T0 + 2)).toEqual({ a: 8 });
  });

  it('keeps what was announced while a discovery ran (the query may not have seen those rows)', () => {
    const s = scheduler();
    const since = s.beginDiscovery();
    s.hint(['new'], T0); // committed while the discovery query ran
    s.discovered(new Map([['old', 1_000]]), T0, since);
    expect(claimRound(s, 64, T0)).toEqual({ new: 64 });
    expect(s.nextDueAt(T0)).toBe(T0 + 1_000);
    // A later discovery that finds nothing pending for it does forget it.
    s.discovered(new Map(), T0 + 1, s.beginDiscovery());
    expect(claimRound(s, 64, T0 + 1)).toEqual({});
  });

  it('learns due times from discovery and from retries recorded here, and forgets endpoints with nothing pending', () => {
    const s = scheduler();
    s.discovered(
      new Map([
        ['now', 0],
        ['later', 500],
      ]),
      T0,
      s.beginDiscovery(),
    );
    expect(claimRound(s, 64, T0, { now: 1 })).toEqual({ now: 1 });
    expect(s.nextDueAt(T0)).toBe(T0 + 500);
    s.rescheduled('now', T0 + 200); // its delivery failed and was scheduled again
    expect(s.nextDueAt(T0)).toBe(T0 + 200);
    // Both due at T0 + 500: 32 slots each, less the one 'now' has in flight.
    expect(claimRound(s, 63, T0 + 500)).toEqual({ now: 31, later: 32 });

    s.discovered(new Map(), T0 + 600, s.beginDiscovery());
    expect(s.nextDueAt(T0 + 600)).toBeNull();
    expect(claimRound(s, 64, T0 + 600)).toEqual({});
  });
});

describe('EndpointScheduler: circuit breaker', () => {
  it('opens after the failures in a row, holds the endpoint, probes once after the cool-down, and closes on success', () => {
    const s = scheduler();
    s.hint(['bad'], T0);
    expect(claimRound(s, 64, T0, { bad: 3 })).toEqual({ bad: 3 });
    expect(s.finished('bad', false, T0)).toBeNull();
    expect(s.finished('bad', false, T0)).toBeNull();
    expect(s.finished('bad', false, T0)).toEqual({ to: 'open', cooldownMs: 1_000, failures: 3 });
    expect(s.circuitOf('bad')).toBe('open');

    // Its backlog is due, but nothing is claimed until the cool-down is over.
    s.hint(['bad'], T0);
    expect(claimRound(s, 64, T0 + 999)).toEqual({});
    expect(s.nextDueAt(T0 + 999)).toBe(T0 + 1_000);
    expect(claimRound(s, 64, T0 + 1_000)).toEqual({ bad: 1 });
    expect(s.circuitOf('bad')).toBe('half-open');
    expect(claimRound(s, 63, T0 + 1_001)).toEqual({}); // one probe at a time

    expect(s.finished('bad', true, T0 + 1_100)).toEqual({ to: 'closed' });
    expect(s.circuitOf('bad')).toBe('closed');
    // The rows it held back are due again at once, with every slot.
    expect(claimRound(s, 64, T0 + 1_100)).toEqual({ bad: 64 });
  });

  it('does not count refusals (null): a receiver that refuses most events and takes the rest stays closed', () => {
    const s = scheduler();
    s.hint(['picky'], T0);
    claimRound(s, 64, T0);
    // 4 of 5 events refused (a 4xx to events it does not want), the 5th taken, over and over.
    for (let i = 0; i < 50; i++) expect(s.finished('picky', i % 5 === 4 ? true : null, T0)).toBeNull();
    expect(s.circuitOf('picky')).toBe('closed');
    // Nor does a refusal break a row of failures: the receiver may be failing every event it wants.
    for (const verdict of [false, null, false, null, null])
      expect(s.finished('picky', verdict, T0)).toBeNull();
    expect(s.finished('picky', false, T0)).toEqual({ to: 'open', cooldownMs: 1_000, failures: 3 });
  });

  it('probes again at once after a refused probe (it judged nothing), keeping the cool-down', () => {
    const s = scheduler({ breakerFailures: 1 });
    s.hint(['bad'], T0);
    claimRound(s, 64, T0, { bad: 1 });
    s.finished('bad', false, T0);
    s.hint(['bad'], T0);
    expect(claimRound(s, 64, T0 + 1_000)).toEqual({ bad: 1 });
    expect(s.finished('bad', null, T0 + 1_010)).toBeNull();
    expect(s.circuitOf('bad')).toBe('open');
    expect(claimRound(s, 64, T0 + 1_010)).toEqual({ bad: 1 }); // the next probe, no cool-down
    expect(claimRound(s, 63, T0 + 1_010)).toEqual({}); // still one at a time
    // It fails: the cool-down doubles from where it was, as if the refused probe had not been.
    expect(s.finished('bad', false, T0 + 1_020)).toEqual({ to: 'open', cooldownMs: 2_000, failures: 2 });
  });

  it('doubles the cool-down after each failed probe, up to its cap, and resets it on success', () => {
    const s = scheduler({ breakerFailures: 1 });
    s.hint(['bad'], T0);
    claimRound(s, 1, T0);
    expect(s.finished('bad', false, T0)).toMatchObject({ to: 'open', cooldownMs: 1_000 });
    let now = T0;
    const cooldowns: number[] = [];
    for (let probe = 0; probe < 7; probe++) {
      now = s.nextDueAt(now)!;
      expect(claimRound(s, 64, now)).toEqual({ bad: 1 });
      const change = s.finished('bad', false, now);
      cooldowns.push(change && change.to === 'open' ? change.cooldownMs : -1);
    }
    expect(cooldowns).toEqual([2_000, 4_000, 8_000, 16_000, MAX_COOLDOWN_FACTOR * 1_000, 20_000, 20_000]);
    now = s.nextDueAt(now)!;
    claimRound(s, 64, now);
    s.finished('bad', true, now);
    s.finished('bad', false, now);
    expect(s.circuitOf('bad')).toBe('open');
    expect(s.nextDueAt(now)).toBe(now + 1_000);
  });

  it('frees the slot of a delivery that could not be recorded (our database failing) without judging the receiver', () => {
    const s = scheduler({ breakerFailures: 1, endpointConcurrency: 2 });
    s.hint(['a'], T0);
    expect(claimRound(s, 64, T0)).toEqual({ a: 2 });
    s.released('a', T0);
    s.released('a', T0);
    expect(s.circuitOf('a')).toBe('closed');
    expect(claimRound(s, 64, T0)).toEqual({ a: 2 });
  });

  it('opens the circuit again, for the same cool-down, when its probe could not be recorded, then probes again', () => {
    const s = scheduler({ breakerFailures: 1 });
    s.hint(['bad'], T0);
    claimRound(s, 64, T0, { bad: 1 });
    s.finished('bad', false, T0);
    s.hint(['bad'], T0); // its backlog is due
    expect(claimRound(s, 64, T0 + 1_000)).toEqual({ bad: 1 });
    expect(s.circuitOf('bad')).toBe('half-open');

    // The probe's outcome was lost (our database failing): nothing to judge the receiver by.
    s.released('bad', T0 + 1_100);
    expect(s.circuitOf('bad')).toBe('open');
    expect(s.nextDueAt(T0 + 1_100)).toBe(T0 + 2_100);
    expect(claimRound(s, 64, T0 + 2_099)).toEqual({});
    expect(claimRound(s, 64, T0 + 2_100)).toEqual({ bad: 1 });
    expect(s.finished('bad', true, T0 + 2_200)).toEqual({ to: 'closed' });
    expect(claimRound(s, 64, T0 + 2_200)).toEqual({ bad: 64 });
  });

  it('lets the other endpoints use the held endpoint’s share', () => {
    const s = scheduler({ breakerFailures: 1 });
    s.hint(['bad'], T0);
    claimRound(s, 64, T0, { bad: 1 });
    s.finished('bad', false, T0);
    s.hint(['bad', 'good'], T0);
    expect(claimRound(s, 64, T0)).toEqual({ good: 64 });
  });

  it('keeps an open circuit while its cool-down runs, though nothing of it is pending, and counts it', () => {
    const s = scheduler({ breakerFailures: 1 });
    s.hint(['bad'], T0);
    claimRound(s, 64, T0, { bad: 1 });
    s.finished('bad', false, T0);
    s.discovered(new Map(), T0 + 10, s.beginDiscovery());
    expect(s.openCircuits()).toBe(1);
    s.hint(['bad'], T0 + 20); // a new event for it: still held
    expect(claimRound(s, 64, T0 + 20)).toEqual({});
    // A success of a resend to the setting's URL (nothing in flight here) closes it.
    expect(s.finished('bad', true, T0 + 30, false)).toEqual({ to: 'closed' });
    expect(s.openCircuits()).toBe(0);
    expect(claimRound(s, 64, T0 + 30)).toEqual({ bad: 64 });
  });

  it('keeps an open circuit past its cool-down when the probe finds nothing due: only an answer closes it', () => {
    const s = scheduler({ breakerFailures: 1 });
    s.hint(['bad'], T0);
    claimRound(s, 64, T0, { bad: 1 });
    expect(s.finished('bad', false, T0)).toEqual({ to: 'open', cooldownMs: 1_000, failures: 1 });
    // The cool-down is over; the probe's claim finds nothing (another replica took the row, or it
    // was resent elsewhere), and discovery then sees nothing pending at the endpoint.
    s.hint(['bad'], T0 + 1_000);
    expect(claimRound(s, 64, T0 + 1_000, { bad: 0 })).toEqual({ bad: 0 });
    s.discovered(new Map(), T0 + 1_010, s.beginDiscovery());
    expect(s.circuitOf('bad')).toBe('open');
    expect(s.openCircuits()).toBe(1);
    // New events for the receiver that failed: one probe goes, not the whole share.
    s.hint(['bad'], T0 + 2_000);
    expect(claimRound(s, 64, T0 + 2_000)).toEqual({ bad: 1 });
    expect(claimRound(s, 63, T0 + 2_000)).toEqual({});
    // A refusal of the probe judges nothing either; only its 2xx closes the circuit.
    expect(s.finished('bad', null, T0 + 2_100)).toBeNull();
    s.discovered(new Map(), T0 + 2_200, s.beginDiscovery());
    expect(s.circuitOf('bad')).toBe('open');
    s.hint(['bad'], T0 + 2_300);
    expect(claimRound(s, 64, T0 + 2_300)).toEqual({ bad: 1 });
    expect(s.finished('bad', true, T0 + 2_400)).toEqual({ to: 'closed' });
    s.discovered(new Map(), T0 + 2_500, s.beginDiscovery());
    expect(s.openCircuits()).toBe(0);
  });
});

/** A claim round as the worker makes it: resends first, then rows, with `available` of each due. */
function resendRound(
  s: EndpointScheduler,
  free: number,
  now: number,
  available: { resends?: Record<string, number>; rows?: Record<string, number> } = {},
) {
  const allocation = s.allocate(free, now);
  const resends: Record<string, number> = {};
  for (const [id, asked] of allocation.resends)
    resends[id] = Math.min(asked, available.resends?.[id] ?? Infinity);
  s.resendsClaimed(allocation, new Map(Object.entries(resends)));
  const rows: Record<string, number> = {};
  for (const [id, asked] of allocation.rows) {
    rows[id] = Math.min(asked, available.rows?.[id] ?? Infinity);
    s.claimed(id, asked, rows[id], allocation, now);
  }
  return { resends, rows };
}

describe('EndpointScheduler: resends', () => {
  it('gives resends slots of their endpoint’s share, before its rows: many resends to a hung receiver hold only that share', () => {
    const s = scheduler({ endpointConcurrency: 32 });
    s.hintResends(['noisy'], T0);
    expect(resendRound(s, 64, T0)).toEqual({ resends: { noisy: 32 }, rows: {} });
    // They hang; its rows and another endpoint's come due: noisy has no room left, the other gets
    // its share.
    s.hint(['noisy', 'other'], T0);
    expect(resendRound(s, 32, T0)).toEqual({ resends: {}, rows: { other: 32 } });
    // As resends finish, the slots they free go to noisy's resends first, then to its rows.
    for (let i = 0; i < 3; i++) s.resendFinished('noisy', null, T0);
    expect(resendRound(s, 3, T0, { resends: { noisy: 1 } })).toEqual({
      resends: { noisy: 1 },
      rows: { noisy: 2 },
    });
  });

  it('forgets an endpoint’s resends once a claim gets fewer than asked, and learns them from discovery', () => {
    const s = scheduler();
    s.hintResends(['a'], T0);
    expect(resendRound(s, 10, T0, { resends: { a: 2 } })).toEqual({ resends: { a: 2 }, rows: {} });
    expect(resendRound(s, 8, T0)).toEqual({ resends: {}, rows: {} });
    const allocation = s.allocate(8, T0);
    expect(allocation.resends.size).toBe(0);

    s.discovered(new Map(), T0, s.beginDiscovery(), new Map([['b', 300]]));
    expect(s.nextDueAt(T0)).toBe(T0 + 300);
    expect(resendRound(s, 8, T0 + 300, { resends: { b: 1 } })).toEqual({ resends: { b: 1 }, rows: {} });
    // Its resend is in flight: a discovery that lists nothing of it keeps it until it finishes.
    s.discovered(new Map(), T0 + 400, s.beginDiscovery(), new Map());
    s.resendFinished('b', true, T0 + 500);
    s.discovered(new Map(), T0 + 600, s.beginDiscovery(), new Map());
    expect(s.nextDueAt(T0 + 600)).toBeNull();
  });

  it('sends an open circuit’s resends one at a time, without waiting for the cool-down; one that succeeds at the setting’s URL closes it', () => {
    const s = scheduler({ breakerFailures: 1 });
    s.hint(['bad'], T0);
    claimRound(s, 64, T0, { bad: 1 });
    s.finished('bad', false, T0);
    expect(s.circuitOf('bad')).toBe('open');
    s.hint(['bad'], T0);
    s.hintResends(['bad'], T0);
    expect(resendRound(s, 64, T0 + 10)).toEqual({ resends: { bad: 1 }, rows: {} });
    expect(resendRound(s, 63, T0 + 20)).toEqual({ resends: {}, rows: {} });
    // Failed at the setting's URL: still open, the next resend goes.
    expect(s.resendFinished('bad', false, T0 + 30)).toBeNull();
    expect(resendRound(s, 64, T0 + 40)).toEqual({ resends: { bad: 1 }, rows: {} });
    // A resend elsewhere says nothing about the receiver; one at the setting's URL that succeeds
    // closes the circuit and the backlog flows.
    expect(s.resendFinished('bad', null, T0 + 50)).toBeNull();
    expect(s.circuitOf('bad')).toBe('open');
    expect(resendRound(s, 64, T0 + 60, { resends: { bad: 1 } })).toEqual({ resends: { bad: 1 }, rows: {} });
    expect(s.resendFinished('bad', true, T0 + 70)).toEqual({ to: 'closed' });
    expect(resendRound(s, 64, T0 + 70, { resends: { bad: 0 } })).toEqual({
      resends: { bad: 0 },
      rows: { bad: 64 },
    });
  });

  it('frees the slot of a resend that could not be recorded, without touching the circuit', () => {
    const s = scheduler({ breakerFailures: 1, endpointConcurrency: 2 });
    s.hint(['a'], T0);
    claimRound(s, 64, T0, { a: 1 });
    s.finished('a', false, T0);
    s.hint(['a'], T0);
    s.hintResends(['a'], T0);
    // The probe and a resend go together.
    expect(resendRound(s, 64, T0 + 1_000)).toEqual({ resends: { a: 1 }, rows: { a: 1 } });
    expect(s.circuitOf('a')).toBe('half-open');
    s.released('a', T0 + 1_100, true);
    expect(s.circuitOf('a')).toBe('half-open');
    expect(resendRound(s, 64, T0 + 1_100)).toEqual({ resends: { a: 1 }, rows: {} });
  });
});

describe('EndpointScheduler: deliveries not sent (the setting’s secrets open with no key held here)', () => {
  it('counts no failure and opens no circuit, holds the endpoint, then tries one at a time until one is sent', () => {
    const s = scheduler({ breakerFailures: 3 });
    s.hint(['locked', 'other'], T0);
    expect(claimRound(s, 64, T0)).toEqual({ locked: 32, other: 32 });
    // Every one of them comes back unsent: far more than the failures that open a circuit.
    for (let i = 0; i < 32; i++) s.unsent('locked', T0 + 10);
    expect(s.circuitOf('locked')).toBe('closed');
    expect(s.openCircuits()).toBe(0);
    // Its rows wait (the other endpoint takes every free slot), then one is tried again.
    for (let i = 0; i < 32; i++) s.finished('other', true, T0 + 10);
    s.hint(['other'], T0 + 10);
    expect(claimRound(s, 64, T0 + 10)).toEqual({ other: 64 });
    expect(s.nextDueAt(T0 + 10)).toBe(T0 + 5_010);
    expect(claimRound(s, 64, T0 + 5_009)).toEqual({});
    expect(claimRound(s, 64, T0 + 5_010)).toEqual({ locked: 1 });
    expect(claimRound(s, 63, T0 + 5_010)).toEqual({}); // one try at a time
    expect(s.nextDueAt(T0 + 5_010)).toBeNull();
    s.unsent('locked', T0 + 5_020);
    expect(claimRound(s, 64, T0 + 5_020)).toEqual({});
    expect(claimRound(s, 64, T0 + 10_020)).toEqual({ locked: 1 });
    // The key is back: it was sent (whatever the receiver said), and the endpoint has its share again.
    expect(s.finished('locked', true, T0 + 10_030)).toBeNull();
    expect(claimRound(s, 64, T0 + 10_030)).toEqual({ locked: 32 });
    // Failures of the receiver count from zero: none was counted while nothing was sent.
    for (let i = 0; i < 2; i++) expect(s.finished('locked', false, T0 + 10_040)).toBeNull();
    expect(s.finished('locked', false, T0 + 10_040)).toEqual({ to: 'open', cooldownMs: 1_000, failures: 3 });
  });

  it('leaves an open circuit as it was: an unsent probe opens it again for the same cool-down', () => {
    const s = scheduler({ breakerFailures: 1 });
    s.hint(['bad'], T0);
    claimRound(s, 64, T0, { bad: 1 });
    s.finished('bad', false, T0);
    s.hint(['bad'], T0);
    expect(claimRound(s, 64, T0 + 1_000)).toEqual({ bad: 1 });
    expect(s.circuitOf('bad')).toBe('half-open');
    s.unsent('bad', T0 + 1_100);
    expect(s.circuitOf('bad')).toBe('open');
    // The next try waits for both its cool-down and the wait for the key.
    expect(s.nextDueAt(T0 + 1_100)).toBe(T0 + 6_100);
    expect(claimRound(s, 64, T0 + 6_100)).toEqual({ bad: 1 });
    expect(s.circuitOf('bad')).toBe('half-open');
    expect(s.finished('bad', false, T0 + 6_200)).toEqual({ to: 'open', cooldownMs: 2_000, failures: 2 });
  });

  it('holds resends too, one try at a time, and leaves them due', () => {
    const s = scheduler();
    s.hint(['locked'], T0);
    s.hintResends(['locked'], T0);
    expect(resendRound(s, 64, T0, { resends: { locked: 2 } })).toEqual({
      resends: { locked: 2 },
      rows: { locked: 62 },
    });
    s.unsent('locked', T0 + 10, true);
    s.unsent('locked', T0 + 10, true);
    for (let i = 0; i < 62; i++) s.unsent('locked', T0 + 10);
    expect(s.circuitOf('locked')).toBe('closed');
    expect(resendRound(s, 64, T0 + 5_009)).toEqual({ resends: {}, rows: {} });
    // One try: a resend (they come first), not a resend and a row.
    expect(resendRound(s, 64, T0 + 5_010)).toEqual({ resends: { locked: 1 }, rows: {} });
    expect(resendRound(s, 64, T0 + 5_010)).toEqual({ resends: {}, rows: {} });
    expect(s.resendFinished('locked', true, T0 + 5_020)).toBeNull();
    expect(resendRound(s, 64, T0 + 5_020, { resends: { locked: 1 } })).toEqual({
      resends: { locked: 1 },
      rows: { locked: 63 },
    });
  });
});

describe('EndpointScheduler: deleted settings', () => {
  /** An endpoint whose circuit opened, then whose webhooks went (its setting deleted elsewhere). */
  function openAndIdle(s: EndpointScheduler, id: string) {
    s.hint([id], T0);
    claimRound(s, 64, T0, { [id]: 1 });
    s.finished(id, false, T0);
    s.discovered(new Map(), T0 + 10, s.beginDiscovery());
  }

  it('names the circuits kept with nothing due nor in flight, and forgets those it is told are gone', () => {
    const s = scheduler({ breakerFailures: 1 });
    openAndIdle(s, 'gone');
    openAndIdle(s, 'live');
    s.hint(['busy'], T0 + 20);
    claimRound(s, 64, T0 + 20, { busy: 1 });
    s.finished('busy', false, T0 + 20);
    s.hint(['busy'], T0 + 20); // open, with rows due: not idle
    expect(s.idleCircuits().sort()).toEqual(['gone', 'live']);
    s.forget(['gone']);
    expect(s.idleCircuits()).toEqual(['live']);
    expect(s.openCircuits()).toBe(2);
    // Forgotten: a hint for it (a late fan-out) starts from a closed circuit.
    expect(s.circuitOf('gone')).toBe('closed');
  });

  it('keeps an endpoint with deliveries in flight, closed and with nothing due, until discovery drops it', () => {
    const s = scheduler({ breakerFailures: 1, endpointConcurrency: 2 });
    s.hint(['a'], T0);
    expect(claimRound(s, 64, T0)).toEqual({ a: 2 });
    expect(s.finished('a', false, T0)).toMatchObject({ to: 'open' });
    s.forget(['a']);
    expect(s.openCircuits()).toBe(0);
    expect(claimRound(s, 64, T0 + 5_000)).toEqual({});
    expect(s.finished('a', false, T0 + 10)).toBeNull(); // its last one: one failure, no circuit opened
    s.discovered(new Map(), T0 + 20, s.beginDiscovery());
    expect(s.idleCircuits()).toEqual([]);
    expect(s.openCircuits()).toBe(0);
  });
});
