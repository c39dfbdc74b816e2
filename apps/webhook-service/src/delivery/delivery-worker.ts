import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { WebhookMetrics } from '../metrics/webhook-metrics.js';
import { DeliveryRepository, type DeliveryJob } from './delivery.repository.js';
import { DeliverWebhook, type DeliveryOutcome } from './deliver-webhook.usecase.js';
import { EndpointScheduler } from './endpoint-scheduler.js';

/**
 * The delivery loop of one process: claims due deliveries (resends first) up to its free
 * concurrency, shared fairly between endpoints (EndpointScheduler), runs them, and sleeps until the
 * next one is due, a poll interval passes, or it is woken (new webhooks committed here, a resend
 * asked here, a delivery finished). Every poll interval it looks up which endpoints have due rows
 * (discovery); replicas share the work through the claim's SKIP LOCKED; nothing is held in memory
 * that a crash could lose.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly running = new Set<Promise<void>>();
  private readonly scheduler: EndpointScheduler;
  private stopped = false;
  private loop?: Promise<void>;
  private woken = false;
  private wakeUp?: () => void;
  private lastResendCheck = 0;
  private lastDiscovery = 0;

  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly deliver: DeliverWebhook,
    private readonly metrics: WebhookMetrics,
    @Inject(WEBHOOK_CONFIG) private readonly config: WebhookConfig,
  ) {
    this.scheduler = new EndpointScheduler({
      concurrency: config.WEBHOOK_CONCURRENCY,
      endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY ?? Math.ceil(config.WEBHOOK_CONCURRENCY / 2),
      breakerFailures: config.WEBHOOK_BREAKER_FAILURES,
      breakerCooldownMs: config.WEBHOOK_BREAKER_COOLDOWN_MS,
    });
  }

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

  /** Look for due work now: after new webhooks of these settings were committed, or a resend asked. */
  wake(options: { resends?: boolean; settingsIds?: Iterable<string> } = {}): void {
    if (options.resends) this.lastResendCheck = 0;
    if (options.settingsIds) this.scheduler.hint(options.settingsIds, Date.now());
    this.woken = true;
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    const { WEBHOOK_CONCURRENCY: concurrency, WEBHOOK_POLL_MS: poll } = this.config;
    while (!this.stopped) {
      try {
        this.woken = false;
        if (Date.now() - this.lastDiscovery >= poll) {
          this.lastDiscovery = Date.now();
          const since = this.scheduler.beginDiscovery();
          this.scheduler.discovered(await this.deliveries.dueEndpoints(), Date.now(), since);
          this.metrics.openCircuits.set(this.scheduler.openCircuits());
        }
        const free = concurrency - this.running.size;
        if (free > 0 && (await this.claimAndStart(free))) continue; // there may be more due
        const now = Date.now();
        const nextDue = this.scheduler.nextDueAt(now);
        const untilDiscovery = this.lastDiscovery + poll - now;
        await this.sleep(
          Math.max(1, nextDue === null ? untilDiscovery : Math.min(untilDiscovery, nextDue - now)),
        );
      } catch (error) {
        this.logger.error(`Delivery loop: ${String(error)}`);
        await this.sleep(poll);
      }
    }
  }

  /** Claims and starts up to `free` deliveries; true when a claim was filled (more may be due). */
  private async claimAndStart(free: number): Promise<boolean> {
    const lease = this.config.WEBHOOK_LEASE_MS;
    if (Date.now() - this.lastResendCheck >= this.config.WEBHOOK_POLL_MS) {
      this.lastResendCheck = Date.now();
      const resends = await this.deliveries.claimResends(
        Math.min(free, this.config.WEBHOOK_CLAIM_BATCH),
        lease,
      );
      for (const job of resends) this.start(job);
      free -= resends.length;
      if (free <= 0) return true;
    }
    const allocation = this.scheduler.allocate(Math.min(free, this.config.WEBHOOK_CLAIM_BATCH), Date.now());
    if (allocation.rows.size === 0) return false;
    const jobs = await this.deliveries.claimWebhooks(allocation.rows, lease);
    const got = new Map<string, number>();
    for (const job of jobs) got.set(job.settingsId, (got.get(job.settingsId) ?? 0) + 1);
    let filled = false;
    for (const [settingsId, asked] of allocation.rows) {
      const claimed = got.get(settingsId) ?? 0;
      this.scheduler.claimed(settingsId, asked, claimed, allocation, Date.now());
      if (claimed === asked) filled = true;
    }
    for (const job of jobs) this.start(job);
    return filled;
  }

  private start(job: DeliveryJob): void {
    this.metrics.inFlight.inc();
    const task: Promise<void> = this.deliver
      .execute(job)
      .then(
        (outcome) => this.finished(job, outcome),
        (error: unknown) => {
          // Not recorded: the lease runs out and the delivery is tried again (at least once). Our
          // database failing says nothing about the receiver: its circuit is not judged (a probe's
          // circuit opens again for the same cool-down).
          this.logger.error(`Webhook ${job.webhookId}: attempt not recorded: ${String(error)}`);
          if (job.kind === 'scheduled') this.scheduler.released(job.settingsId, Date.now());
        },
      )
      .finally(() => {
        this.running.delete(task);
        this.metrics.inFlight.dec();
        this.wake();
      });
    this.running.add(task);
  }

  /** Feeds an attempt's outcome to the endpoint's circuit and schedule. */
  private finished(job: DeliveryJob, outcome: DeliveryOutcome): void {
    const now = Date.now();
    if (job.kind === 'scheduled' && outcome.retryDelayMs !== null)
      this.scheduler.rescheduled(job.settingsId, now + outcome.retryDelayMs);
    // A resend elsewhere says nothing about the endpoint.
    if (job.kind === 'resend' && !job.toSettingsUrl) return;
    const change = this.scheduler.finished(job.settingsId, outcome.succeeded, now, job.kind === 'scheduled');
    if (!change) return;
    this.metrics.circuitChanges.inc({ to: change.to });
    this.metrics.openCircuits.set(this.scheduler.openCircuits());
    if (change.to === 'open')
      this.logger.warn(
        `Endpoint of setting ${job.settingsId}: circuit open after ${change.failures} failed attempts in a row; ` +
          `its deliveries wait ${change.cooldownMs} ms, then one probe is sent`,
      );
    else this.logger.log(`Endpoint of setting ${job.settingsId}: circuit closed (a delivery succeeded)`);
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
