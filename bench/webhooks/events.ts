// The webhooks benchmark's events: `transaction.payment.success` envelopes of the bench merchant,
// made by the contracts of the code under test, published on the run's stream (msgID = event id) in
// a pipelined burst or evenly paced, each remembered under its key (the transactionId the receiver
// reports) with the time it counts from.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BenchEnvironment } from '../core/environment.js';
import { round, sleep, target } from '../core/util.js';

export const EVENT = 'transaction.payment.success';
const PUBLISH_WINDOW = 512; // publishes awaiting their JetStream ack at once

export const envelopeFile = () => join(target.root, 'libs/contracts/dist/events/envelope.js');
export const contentFile = () => join(target.root, 'libs/contracts/dist/events/content.js');

/** Epoch milliseconds with sub-millisecond resolution, comparable between processes of this machine. */
export const nowEpoch = () => performance.timeOrigin + performance.now();

/** The data of a bench event (a frictionless card payment's success), keyed by its transaction id. */
export function envelopeData(transactionId: string) {
  return {
    transactionId,
    orderId: null,
    orderRef: 'bench-webhook',
    status: 'Success',
    operationType: 'Payment',
    amount: '25.00',
    currency: 'EUR',
    code: 'BYRD200',
    description: 'Operation successfully completed',
    isoAmount: 2500,
    paymentMethod: 'card',
    initiatedFrom: 'Server',
  };
}

interface Contracts {
  createEnvelope(
    type: string,
    fields: { merchantId: string; paymentMethod: string; data: unknown },
  ): { id: string };
  parseEnvelope(payload: string): unknown;
  toPublicContent(type: string, data: unknown): unknown;
}

/** The envelope and content functions of the code under test's contracts. */
export async function loadContracts(): Promise<Contracts> {
  const envelope = (await import(pathToFileURL(envelopeFile()).href)) as Pick<
    Contracts,
    'createEnvelope' | 'parseEnvelope'
  >;
  const content = (await import(pathToFileURL(contentFile()).href)) as Pick<Contracts, 'toPublicContent'>;
  return {
    createEnvelope: envelope.createEnvelope,
    parseEnvelope: envelope.parseEnvelope,
    toPublicContent: content.toPublicContent,
  };
}

export interface BenchEvent {
  id: string;
  payload: string;
}

export class Publisher {
  /** Every webhook the run asked for: key -> the time it counts from (published, scheduled or inserted). */
  readonly sentAt = new Map<string, number>();
  /** Keys of rows inserted straight into the table (no event published). */
  readonly injected = new Set<string>();
  readonly errors: string[] = [];
  private readonly subject: string;

  constructor(
    private readonly env: BenchEnvironment,
    private readonly contracts: Contracts,
    private readonly merchantId: string,
  ) {
    this.subject = env.nats.subject(EVENT);
    contracts.parseEnvelope(this.envelopeOf(randomUUID()).payload); // the consumers' parser accepts what is published
  }

  envelopeOf(key: string): BenchEvent {
    const envelope = this.contracts.createEnvelope(EVENT, {
      merchantId: this.merchantId,
      paymentMethod: 'card',
      data: envelopeData(key),
    });
    return { id: envelope.id, payload: JSON.stringify(envelope) };
  }

  /** `total` events of the bench merchant, each under a key of its own. */
  newEvents(total: number) {
    const keys = Array.from({ length: total }, () => randomUUID());
    return { keys, events: keys.map((key) => this.envelopeOf(key)) };
  }

  publishOne(key: string, event: BenchEvent, at: number): Promise<void> {
    this.sentAt.set(key, at);
    return this.env.nats.js.publish(this.subject, event.payload, { msgID: event.id }).then(
      () => undefined,
      (error: unknown) => {
        this.errors.push(String(error));
        this.sentAt.delete(key);
      },
    );
  }

  /** As fast as JetStream acknowledges: PUBLISH_WINDOW publishes in flight at once. */
  async publishBurst(keys: string[], events: BenchEvent[]): Promise<void> {
    let inFlight = 0;
    let release: (() => void) | null = null;
    const pending = [];
    for (let i = 0; i < events.length; i++) {
      while (inFlight >= PUBLISH_WINDOW) await new Promise<void>((resolve) => (release = resolve));
      inFlight++;
      pending.push(
        this.publishOne(keys[i], events[i], nowEpoch()).finally(() => {
          inFlight--;
          const wake = release;
          release = null;
          wake?.();
        }),
      );
    }
    await Promise.all(pending);
  }

  /** Evenly at `rate`/s; each event's time is its scheduled one (no coordinated omission). */
  async publishPaced(
    keys: string[],
    events: BenchEvent[],
    rate: number,
  ): Promise<{ publishLateMaxMs: number | null }> {
    const total = keys.length;
    const interval = 1000 / rate;
    const start = performance.now() + 20;
    const pending = [];
    let lateMax = 0;
    for (let i = 0; i < total;) {
      const now = performance.now();
      while (i < total && start + i * interval <= now) {
        const scheduled = start + i * interval;
        lateMax = Math.max(lateMax, now - scheduled);
        pending.push(this.publishOne(keys[i], events[i], performance.timeOrigin + scheduled));
        i++;
      }
      if (i < total) await sleep(Math.max(0, start + i * interval - performance.now()));
    }
    await Promise.all(pending);
    return { publishLateMaxMs: round(lateMax, 1) };
  }

  /** Rows inserted for `keys` count from now. */
  inserted(keys: string[]): void {
    const at = nowEpoch();
    for (const key of keys) {
      this.sentAt.set(key, at);
      this.injected.add(key);
    }
  }
}
