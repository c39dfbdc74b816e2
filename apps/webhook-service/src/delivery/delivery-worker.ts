import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { DeliveryQueue, type DeliveryJob } from './delivery-queue.js';
import { DeliverWebhook } from './deliver-webhook.usecase.js';

/**
 * The delivery loop of one process: claims due deliveries (resends first) up to its free
 * concurrency, runs them, and sleeps until the next one is due, a poll interval passes, or it is
 * woken (new webhooks committed here, a resend asked here, a delivery finished). Replicas share
 * the work through the claim's SKIP LOCKED; nothing is held in memory that a crash could lose.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  private loop?: Promise<void>;
  private woken = false;
  private wakeUp?: () => void;
  private lastResendCheck = 0;

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly deliver: DeliverWebhook,
    private readonly metrics: WebhookMetrics,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.WEBHOOK_DELIVERY_ENABLED) {
      this.logger.log('Delivery is disabled on this replica (WEBHOOK_DELIVERY_ENABLED=false)');
      return;
    }
    this.loop = this.run();
  }

  /** Stops claiming and lets the deliveries in hand finish (each is bounded by WEBHOOK_TIMEOUT_MS). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
    await Promise.allSettled([...this.running]);
  }

  /** Look for due work now (e.g. after new webhooks were committed). */
  wake(resends = false): void {
    if (resends) this.lastResendCheck = 0;
    this.woken = true;
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    const {
      WEBHOOK_CONCURRENCY: concurrency,
      WEBHOOK_CLAIM_BATCH: batch,
      WEBHOOK_POLL_MS: poll,
    } = this.config;
    while (!this.stopped) {
      try {
        this.woken = false;
        const free = concurrency - this.running.size;
        if (free <= 0) {
          await this.sleep(poll);
          continue;
        }
        const wanted = Math.min(free, batch);
        const jobs = await this.claim(wanted);
        for (const job of jobs) this.start(job);
        if (jobs.length === wanted) continue; // there may be more due
        const untilDue = await this.queue.msUntilNextDue();
        // A row due now that this claim did not get is held by another replica's claim; look again soon.
        const wait = untilDue === null ? poll : Math.min(poll, Math.max(untilDue, 1));
        await this.sleep(wait);
      } catch (error) {
        this.logger.error(`Delivery loop: ${String(error)}`);
        await this.sleep(poll);
      }
    }
  }

  private async claim(wanted: number): Promise<DeliveryJob[]> {
    const lease = this.config.WEBHOOK_LEASE_MS;
    let resends: DeliveryJob[] = [];
    if (Date.now() - this.lastResendCheck >= this.config.WEBHOOK_POLL_MS) {
      this.lastResendCheck = Date.now();
      resends = await this.queue.claimResends(wanted, lease);
    }
    if (resends.length >= wanted) return resends;
    return [...resends, ...(await this.queue.claimWebhooks(wanted - resends.length, lease))];
  }

  private start(job: DeliveryJob): void {
    this.metrics.inFlight.inc();
    const task: Promise<void> = this.deliver
      .execute(job)
      .catch((error: unknown) =>
        // Not recorded: the lease runs out and the delivery is tried again (at least once).
        this.logger.error(`Webhook ${job.webhookId}: attempt not recorded: ${String(error)}`),
      )
      .finally(() => {
        this.running.delete(task);
        this.metrics.inFlight.dec();
        this.wake();
      });
    this.running.add(task);
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }
}
