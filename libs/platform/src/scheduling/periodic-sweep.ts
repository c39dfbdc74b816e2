import { Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';

/**
 * A job that every replica runs on a timer (expiry, retention, recovery). A run never overlaps the
 * previous one, a failed run is logged and retried at the next tick, and shutdown waits for the run
 * in progress. The work itself must be safe on several replicas at once (claims with SKIP LOCKED).
 */
export abstract class PeriodicSweep implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected readonly logger = new Logger(this.constructor.name);
  /** Set once shutdown begins: a long sweep checks it between batches and stops early. */
  protected stopping = false;
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  /** What the log calls it when a run fails ("Expiry sweep"). */
  protected abstract readonly sweepName: string;
  /** Milliseconds between runs. */
  protected abstract intervalMs(): number;
  /** One run; returns how many items it handled. */
  abstract execute(): Promise<number>;

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.execute()
        .catch((error: unknown) => this.logger.error(`${this.sweepName} failed: ${String(error)}`))
        .finally(() => (this.running = undefined));
    }, this.intervalMs());
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    this.stopping = true;
    await this.running;
  }
}
