import { openListenStream, type ListenedDelivery } from '../listen.js';

/** A delivery of the listen stream with its webhook body parsed. */
export interface WatchedDelivery extends ListenedDelivery {
  webhook: { id: string; event: string; content: Record<string, unknown> };
}

export interface DeliveryWatchOptions {
  apiKey: string;
  baseUrl: string;
  /** Only these event names. */
  events: string[];
  fetch?: typeof fetch;
}

/**
 * `GET /api/v1/webhooks/listen` read without forwarding: what `trigger` uses to see its event
 * arrive. {@link DeliveryWatch.open} resolves once the server says `ready` (its consumer then exists,
 * so nothing produced afterwards is missed); every delivery from then on is kept for `waitFor`.
 */
export class DeliveryWatch {
  private readonly seen: WatchedDelivery[] = [];
  private wake: () => void = () => undefined;
  private ended: string | null = null;

  private constructor(private readonly abort: AbortController) {}

  /** Opens the stream; a refusal (bad or live key) throws a ByrdApiError. */
  static async open(options: DeliveryWatchOptions): Promise<DeliveryWatch> {
    const abort = new AbortController();
    const events = await openListenStream({ ...options, signal: abort.signal });
    const watch = new DeliveryWatch(abort);
    const first = await events.next();
    if (first.done || first.value.event !== 'ready') {
      abort.abort();
      throw new Error('the listen stream ended before it was ready');
    }
    void watch.read(events);
    return watch;
  }

  /** The first delivery (kept or still to come) matching, or null after `timeoutMs`. */
  async waitFor(
    match: (delivery: WatchedDelivery) => boolean,
    timeoutMs: number,
  ): Promise<WatchedDelivery | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.seen.find(match);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0 || this.ended !== null) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Why the stream ended early, or null while it is open. */
  get endedBecause(): string | null {
    return this.ended;
  }

  close(): void {
    this.ended ??= 'closed';
    this.abort.abort();
    this.wake();
  }

  private async read(events: AsyncGenerator<{ event: string; data: string }>): Promise<void> {
    try {
      for await (const { event, data } of events) {
        if (event !== 'delivery') continue;
        const delivery = JSON.parse(data) as ListenedDelivery;
        this.seen.push({ ...delivery, webhook: JSON.parse(delivery.body) as WatchedDelivery['webhook'] });
        this.wake();
      }
      this.ended ??= 'the listen stream ended';
    } catch (error) {
      this.ended ??= error instanceof Error ? error.message : String(error);
    }
    this.wake();
  }
}
