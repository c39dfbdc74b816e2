/**
 * Which endpoints (webhook settings) this process's worker claims from, and how many rows each:
 * the fairness of docs/webhook-fairness.md. Everything here is advice kept in memory; the rows in
 * PostgreSQL stay the truth (a crash loses nothing, the next discovery rebuilds it).
 *
 * - Fair share: the slots are shared out between the endpoints that want them (due rows or
 *   deliveries in flight), at most ceil(concurrency / contenders) and WEBHOOK_ENDPOINT_CONCURRENCY
 *   each. An endpoint alone gets every slot; a receiver that hangs holds only its share. Resends
 *   (of the endpoint's webhooks, to whatever URL) take slots of the same share, before its
 *   scheduled rows; they wait for a slot like them, they are never dropped.
 * - Circuit breaker: after `failures` failed attempts in a row an endpoint's circuit opens (a
 *   failure is what receiverVerdict says: no answer, 5xx, 408, 429; a refusal, the 4xx a receiver
 *   answers to an event it does not want, neither counts nor breaks the row). Its due
 *   rows then wait in the table, untouched (no attempt is spent, nothing is dropped), until the
 *   cool-down ends; then one probe goes. A probe that fails reopens the circuit for twice as long
 *   (up to MAX_COOLDOWN_FACTOR × the first cool-down); any success closes it. A probe whose outcome
 *   could not be recorded reopens it for the same cool-down. While the circuit is not closed, the
 *   endpoint's resends go one at a time (a resend to the setting's URL that succeeds closes it).
 * - Our own key missing: a delivery not sent because its setting's secrets open with no key of
 *   this process (`unsent`) judges nothing about the receiver. The endpoint's circuit is left as it
 *   was and its rows wait, untouched; one of them is tried again per `unopenableRetryMs` until
 *   one goes out (the key is back, or the setting was sealed again).
 * - A setting deleted (`forget`, on this replica or found gone at discovery) takes its circuit
 *   with it: nothing of it is kept once nothing of it is in flight.
 */

export type CircuitState = 'closed' | 'open' | 'half-open';

/**
 * The cool-down doubles per failed probe, up to this many times the first one: with the defaults
 * (30 s, 10 failures, a retry minute of 60 s) at most 10 minutes, always shorter than the retry delay
 * the probing webhook has reached by then, so a lone failing webhook keeps its schedule exactly.
 */
export const MAX_COOLDOWN_FACTOR = 20;

export interface SchedulerSettings {
  /** WEBHOOK_CONCURRENCY: deliveries this process runs at once. */
  concurrency: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY: most deliveries in flight at one endpoint. */
  endpointConcurrency: number;
  /** WEBHOOK_BREAKER_FAILURES: failed attempts in a row that open the circuit. */
  breakerFailures: number;
  /** WEBHOOK_BREAKER_COOLDOWN_MS: how long a circuit first stays open. */
  breakerCooldownMs: number;
  /**
   * How long an endpoint whose setting's secrets could not be opened here waits before one more
   * try (WEBHOOK_RETRY_UNIT_MS: a retry minute).
   */
  unopenableRetryMs: number;
}

interface Endpoint {
  /** When its next claimable row is due (local ms); null when none is known. */
  dueAt: number | null;
  /** The scheduler's step at which `dueAt` was last set (see `claimed` and `discovered`). */
  dueSetAt: number;
  /** When its next claimable resend is due (local ms); null when none is known. */
  resendDueAt: number | null;
  /** As `dueSetAt`, for `resendDueAt`. */
  resendDueSetAt: number;
  /** Deliveries in flight, resends included. */
  inFlight: number;
  /** Resends among them. */
  resendsInFlight: number;
  failures: number;
  circuit: CircuitState;
  /** While open: when the probe may go. */
  probeAt: number;
  cooldownMs: number;
  /**
   * Set when a delivery of it was not sent because its setting's secrets did not open here (a key
   * missing from WEBHOOK_SECRETS_KEYS): nothing is claimed before then, then one at a time until
   * one is sent. Null otherwise. Not the receiver's doing: the circuit is not touched.
   */
  unopenableUntil: number | null;
  /** Its setting was deleted while deliveries were in flight: their outcomes judge nothing. */
  gone: boolean;
}

/**
 * A claim to make: up to `resends` due resends of each endpoint first, then up to `rows` due rows
 * (scheduled deliveries) of the slots (`slots`) the resends left.
 */
export interface Allocation {
  step: number;
  rows: Map<string, number>;
  resends: Map<string, number>;
  slots: Map<string, number>;
}

export type CircuitChange = { to: 'open'; cooldownMs: number; failures: number } | { to: 'closed' } | null;

export class EndpointScheduler {
  private readonly endpoints = new Map<string, Endpoint>();
  /** Counts allocations, discoveries and due times set, so each knows what came after it. */
  private step = 0;
  /** Rotates the order slots are handed out in, so no endpoint is always served last. */
  private turn = 0;

  constructor(private readonly settings: SchedulerSettings) {}

  /** The step a discovery starts at: pass it to `discovered` with what the query found. */
  beginDiscovery(): number {
    return ++this.step;
  }

  /**
   * What discovery (begun at step `since`) found: every endpoint with a claimable row and how long
   * until it is due. An endpoint not listed has none; it is forgotten once nothing of it is in
   * flight, unless its circuit is not closed: only an answer of its receiver closes it (`finished`),
   * never a cool-down that ran out or a probe that found nothing to send, else new rows would all go
   * at once to the receiver that failed. An endpoint announced while the query ran is left as
   * announced: the query may not have seen it.
   */
  discovered(
    due: ReadonlyMap<string, number>,
    now: number,
    since: number,
    resends: ReadonlyMap<string, number> = new Map(),
  ): void {
    for (const [id, endpoint] of this.endpoints) {
      if (endpoint.dueSetAt <= since && !due.has(id)) endpoint.dueAt = null;
      if (endpoint.resendDueSetAt <= since && !resends.has(id)) endpoint.resendDueAt = null;
      if (endpoint.dueAt !== null || endpoint.resendDueAt !== null) continue;
      if (endpoint.inFlight === 0 && endpoint.circuit === 'closed') this.endpoints.delete(id);
    }
    for (const [id, inMs] of due) {
      const endpoint = this.endpoint(id);
      if (endpoint.dueSetAt <= since) this.setDue(endpoint, now + Math.max(0, inMs));
    }
    for (const [id, inMs] of resends) {
      const endpoint = this.endpoint(id);
      if (endpoint.resendDueSetAt <= since) this.setResendDue(endpoint, now + Math.max(0, inMs));
    }
  }

  /** Rows due now were created for these endpoints. */
  hint(settingsIds: Iterable<string>, now: number): void {
    for (const id of settingsIds) this.setDue(this.endpoint(id), now);
  }

  /** Resends of these endpoints' webhooks were asked (committed) here. */
  hintResends(settingsIds: Iterable<string>, now: number): void {
    for (const id of settingsIds) this.setResendDue(this.endpoint(id), now);
  }

  /** A row of this endpoint becomes due at `at` (a retry recorded here). */
  rescheduled(settingsId: string, at: number): void {
    const endpoint = this.endpoint(settingsId);
    if (endpoint.dueAt === null || at < endpoint.dueAt) this.setDue(endpoint, at);
  }

  /**
   * How many resends and rows to claim at which endpoint with `free` slots: each endpoint with
   * resends or rows due that its circuit lets it send gets up to its fair share less what it has in
   * flight (resends included), one slot at a time round the endpoints, until the free slots or the
   * shares run out. An endpoint's slots go to its resends first (`resendsClaimed` gives what they
   * leave to its rows).
   */
  allocate(free: number, now: number): Allocation {
    const step = ++this.step;
    const allocation: Allocation = { step, rows: new Map(), resends: new Map(), slots: new Map() };
    const { concurrency, endpointConcurrency } = this.settings;
    const ready: { id: string; endpoint: Endpoint; scheduled: number; resends: number }[] = [];
    let contenders = 0;
    for (const [id, endpoint] of this.endpoints) {
      // An endpoint held back by its circuit does not count: the others may use its share.
      let scheduled = endpoint.dueAt !== null && endpoint.dueAt <= now ? this.mayClaim(endpoint, now) : 0;
      const resends =
        endpoint.resendDueAt !== null && endpoint.resendDueAt <= now ? this.mayResend(endpoint, now) : 0;
      // Its secrets did not open here: one try (a resend, else a row), not one of each.
      if (endpoint.unopenableUntil !== null && resends > 0) scheduled = 0;
      const wants = scheduled + resends > 0;
      if (wants || endpoint.inFlight > 0) contenders++;
      if (wants) ready.push({ id, endpoint, scheduled, resends });
    }
    if (ready.length === 0 || free <= 0) return allocation;
    const share = Math.min(endpointConcurrency, Math.ceil(concurrency / contenders));
    const room = ready.map((e) => Math.min(e.scheduled + e.resends, share - e.endpoint.inFlight));
    const start = this.turn++ % ready.length;
    for (let given = true; free > 0 && given;) {
      given = false;
      for (let k = 0; k < ready.length && free > 0; k++) {
        const i = (start + k) % ready.length;
        if (room[i] <= 0) continue;
        room[i]--;
        free--;
        given = true;
        const id = ready[i].id;
        allocation.slots.set(id, (allocation.slots.get(id) ?? 0) + 1);
      }
    }
    for (const { id, scheduled, resends } of ready) {
      const slots = allocation.slots.get(id);
      if (!slots) continue;
      if (resends > 0) allocation.resends.set(id, Math.min(slots, resends));
      if (scheduled > 0) allocation.rows.set(id, Math.min(slots, scheduled));
    }
    return allocation;
  }

  /**
   * The resend claim made for `allocation` got `got` of each endpoint's resends asked: they are in
   * flight, and the endpoint's rows to claim shrink to the slots they left. Fewer than asked means no
   * resend is left due at that endpoint (unless one was asked meanwhile). Answers whether a claim got
   * all it asked (more may be due).
   */
  resendsClaimed(allocation: Allocation, got: ReadonlyMap<string, number>): boolean {
    let filled = false;
    for (const [id, asked] of allocation.resends) {
      const claimed = got.get(id) ?? 0;
      const endpoint = this.endpoint(id);
      endpoint.inFlight += claimed;
      endpoint.resendsInFlight += claimed;
      if (claimed === asked) filled = true;
      else if (endpoint.resendDueSetAt < allocation.step) endpoint.resendDueAt = null;
      const rows = allocation.rows.get(id);
      if (rows === undefined) continue;
      const left = Math.min(rows, (allocation.slots.get(id) ?? 0) - claimed);
      if (left > 0) allocation.rows.set(id, left);
      else allocation.rows.delete(id);
    }
    return filled;
  }

  /**
   * A claim made for `allocation` got `got` of the `asked` rows of this endpoint. Fewer than asked
   * means none is left due now, unless rows were announced after the allocation (a hint or a retry
   * recorded meanwhile), which the claim may not have seen.
   */
  claimed(settingsId: string, asked: number, got: number, allocation: Allocation, now: number): void {
    const endpoint = this.endpoint(settingsId);
    endpoint.inFlight += got;
    if (got > 0 && endpoint.circuit === 'open' && endpoint.probeAt <= now) endpoint.circuit = 'half-open';
    if (got < asked && endpoint.dueSetAt < allocation.step) endpoint.dueAt = null;
  }

  /**
   * A delivery claimed here ended without an outcome to judge the receiver by (it was not recorded).
   * If it was the probe, the circuit opens again for the same cool-down (the receiver was not judged)
   * and then probes again: half-open, it would wait for ever for an outcome that will not come.
   */
  released(settingsId: string, now: number, resend = false): void {
    const endpoint = this.endpoints.get(settingsId);
    if (!endpoint) return;
    endpoint.inFlight = Math.max(0, endpoint.inFlight - 1);
    if (resend) endpoint.resendsInFlight = Math.max(0, endpoint.resendsInFlight - 1);
    // A resend is never the probe.
    else if (endpoint.circuit === 'half-open') this.open(endpoint, now);
  }

  /**
   * A delivery claimed here was not sent: its setting's secrets open with no key this process holds
   * (it was let go of, unrecorded, for any replica to take). That is our fault, not the receiver's:
   * no failure is counted and the circuit stays as it was (a probe's opens again for the same
   * cool-down, as when it could not be recorded). The endpoint's rows stay due, and wait here
   * `unopenableRetryMs` before one is tried again.
   */
  unsent(settingsId: string, now: number, resend = false): void {
    const endpoint = this.endpoint(settingsId);
    endpoint.inFlight = Math.max(0, endpoint.inFlight - 1);
    if (resend) {
      endpoint.resendsInFlight = Math.max(0, endpoint.resendsInFlight - 1);
      this.setResendDue(endpoint, now);
    } else {
      if (endpoint.circuit === 'half-open') this.open(endpoint, now);
      if (endpoint.dueAt === null || endpoint.dueAt > now) this.setDue(endpoint, now);
    }
    endpoint.unopenableUntil = now + this.settings.unopenableRetryMs;
  }

  /**
   * These endpoints' settings were deleted (here, or found gone at discovery): their circuits and
   * due times are dropped. One with deliveries in flight is kept, closed, with nothing due, and its
   * deliveries' outcomes judging nothing (a failure would open a circuit again), until they finish;
   * discovery then drops it like any endpoint with nothing pending.
   */
  forget(settingsIds: Iterable<string>): void {
    for (const id of settingsIds) {
      const endpoint = this.endpoints.get(id);
      if (!endpoint) continue;
      if (endpoint.inFlight === 0) {
        this.endpoints.delete(id);
        continue;
      }
      endpoint.gone = true;
      endpoint.circuit = 'closed';
      endpoint.failures = 0;
      endpoint.dueAt = null;
      endpoint.resendDueAt = null;
      endpoint.unopenableUntil = null;
    }
  }

  /**
   * Endpoints kept only for their circuit (not closed, nothing due nor in flight): the ones whose
   * setting may have been deleted meanwhile, for the worker to ask about.
   */
  idleCircuits(): string[] {
    const idle: string[] = [];
    for (const [id, endpoint] of this.endpoints)
      if (
        endpoint.circuit !== 'closed' &&
        endpoint.inFlight === 0 &&
        endpoint.dueAt === null &&
        endpoint.resendDueAt === null
      )
        idle.push(id);
    return idle;
  }

  /**
   * A resend claimed here finished: its slot is free. `verdict` judges the endpoint's receiver when
   * it went to the setting's URL; null when it went elsewhere (it says nothing about the endpoint) or
   * was refused.
   */
  resendFinished(settingsId: string, verdict: boolean | null, now: number): CircuitChange {
    const endpoint = this.endpoint(settingsId);
    endpoint.inFlight = Math.max(0, endpoint.inFlight - 1);
    endpoint.resendsInFlight = Math.max(0, endpoint.resendsInFlight - 1);
    endpoint.unopenableUntil = null; // it was sent: its secrets opened
    return verdict === null ? null : this.finished(settingsId, verdict, now, false);
  }

  /**
   * A delivery claimed here (`inFlight` true) or a resend to the setting's own URL finished, with
   * receiverVerdict's verdict: true succeeded, false failed, null refused (judges nothing).
   */
  finished(settingsId: string, verdict: boolean | null, now: number, inFlight = true): CircuitChange {
    const endpoint = this.endpoint(settingsId);
    if (inFlight) endpoint.inFlight = Math.max(0, endpoint.inFlight - 1);
    endpoint.unopenableUntil = null; // it was sent: its secrets opened
    if (endpoint.gone) return null;
    const { breakerFailures, breakerCooldownMs } = this.settings;
    if (verdict === null) {
      // The receiver is up and refused that one event: no failure, nor a success to close on (its
      // other events may still fail). A refused probe judged nothing: the next one goes at once.
      if (inFlight && endpoint.circuit === 'half-open') {
        endpoint.circuit = 'open';
        endpoint.probeAt = now;
      }
      return null;
    }
    if (verdict) {
      const wasOpen = endpoint.circuit !== 'closed';
      endpoint.failures = 0;
      endpoint.circuit = 'closed';
      endpoint.cooldownMs = breakerCooldownMs;
      // Rows held back by the circuit are due: look at once rather than at the next discovery.
      if (wasOpen) this.setDue(endpoint, now);
      return wasOpen ? { to: 'closed' } : null;
    }
    endpoint.failures++;
    if (endpoint.circuit === 'half-open') {
      // The probe failed: open again, for twice as long.
      endpoint.cooldownMs = Math.min(endpoint.cooldownMs * 2, breakerCooldownMs * MAX_COOLDOWN_FACTOR);
      return this.open(endpoint, now);
    }
    if (endpoint.circuit === 'closed' && endpoint.failures >= breakerFailures)
      return this.open(endpoint, now);
    return null;
  }

  /** When something known becomes claimable (a row's due time, a circuit's probe); null if nothing. */
  nextDueAt(now: number): number | null {
    let next: number | null = null;
    for (const endpoint of this.endpoints.values()) {
      const held = endpoint.unopenableUntil;
      if (endpoint.resendDueAt !== null) {
        const resendAt = held === null ? endpoint.resendDueAt : Math.max(endpoint.resendDueAt, held);
        if (resendAt > now && this.mayResend(endpoint, resendAt) > 0 && (next === null || resendAt < next))
          next = resendAt;
      }
      if (endpoint.dueAt === null) continue;
      let at = endpoint.dueAt;
      if (held !== null) {
        if (endpoint.inFlight > 0) continue; // its try is out
        at = Math.max(at, held);
      }
      if (endpoint.circuit === 'open') at = Math.max(at, endpoint.probeAt);
      else if (endpoint.circuit === 'half-open') continue; // waits for its probe to finish
      if (at > now && (next === null || at < next)) next = at;
    }
    return next;
  }

  /** Endpoints whose circuit is not closed. */
  openCircuits(): number {
    let open = 0;
    for (const endpoint of this.endpoints.values()) if (endpoint.circuit !== 'closed') open++;
    return open;
  }

  circuitOf(settingsId: string): CircuitState {
    return this.endpoints.get(settingsId)?.circuit ?? 'closed';
  }

  /** Rows the circuit lets this endpoint have in flight now, before the fair share. */
  private mayClaim(endpoint: Endpoint, now: number): number {
    const held = endpoint.unopenableUntil;
    // Its secrets did not open here: nothing until the wait is over, then one try at a time.
    if (held !== null && (held > now || endpoint.inFlight > 0)) return 0;
    if (endpoint.circuit === 'closed') return held === null ? this.settings.concurrency : 1;
    // Open: one probe once the cool-down is over; half-open: the probe is out.
    return endpoint.circuit === 'open' && endpoint.probeAt <= now && endpoint.inFlight === 0 ? 1 : 0;
  }

  /** Resends the circuit lets this endpoint have in flight at `at`, before the fair share. */
  private mayResend(endpoint: Endpoint, at: number): number {
    const held = endpoint.unopenableUntil;
    // Its secrets did not open here: one try at a time once the wait is over.
    if (held !== null) return held <= at && endpoint.inFlight === 0 ? 1 : 0;
    if (endpoint.circuit === 'closed') return this.settings.concurrency;
    // Not closed: one at a time. They are explicit asks (a merchant who fixed the receiver resends
    // one and, if it succeeds, the circuit closes), not the held backlog; one slot at most.
    return endpoint.resendsInFlight === 0 ? 1 : 0;
  }

  private open(endpoint: Endpoint, now: number): CircuitChange {
    endpoint.circuit = 'open';
    endpoint.probeAt = now + endpoint.cooldownMs;
    return { to: 'open', cooldownMs: endpoint.cooldownMs, failures: endpoint.failures };
  }

  private setDue(endpoint: Endpoint, at: number): void {
    endpoint.dueAt = at;
    endpoint.dueSetAt = ++this.step;
  }

  private setResendDue(endpoint: Endpoint, at: number): void {
    endpoint.resendDueAt = at;
    endpoint.resendDueSetAt = ++this.step;
  }

  private endpoint(settingsId: string): Endpoint {
    let endpoint = this.endpoints.get(settingsId);
    if (!endpoint) {
      endpoint = {
        dueAt: null,
        dueSetAt: 0,
        resendDueAt: null,
        resendDueSetAt: 0,
        inFlight: 0,
        resendsInFlight: 0,
        failures: 0,
        circuit: 'closed',
        probeAt: 0,
        cooldownMs: this.settings.breakerCooldownMs,
        unopenableUntil: null,
        gone: false,
      };
      this.endpoints.set(settingsId, endpoint);
    }
    return endpoint;
  }
}
