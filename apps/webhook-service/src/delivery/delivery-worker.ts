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
 * The delivery loop of one process: claims due deliveries up to its free concurrency, shared fairly
 * between endpoints (EndpointScheduler; an endpoint's resends first, within its share), runs them,
 * and sleeps until the next one is due, a poll interval passes, or it is woken (new webhooks
 * committed here, a resend asked here, a delivery finished). Every poll interval it looks up which
 * endpoints have due rows or resends (discovery); replicas share the work through the claim's SKIP
 * LOCKED; nothing is held in memory that a crash could lose.
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
  private lastDiscovery = -Infinity;

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
      unopenableRetryMs: config.WEBHOOK_RETRY_UNIT_MS,
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

  /**
   * Look for due work now: after new webhooks of these settings were committed (`settingsIds`), or
   * resends of their webhooks asked (`resendsOf`).
   */
  wake(options: { resendsOf?: Iterable<string>; settingsIds?: Iterable<string> } = {}): void {
    // No loop here to read the hints (or forget them): a replica that only takes API calls and
    // fans out would keep an entry per setting it ever saw.
    if (!this.config.WEBHOOK_DELIVERY_ENABLED) return;
    if (options.resendsOf) this.scheduler.hintResends(options.resendsOf, monotonicNow());
    if (options.settingsIds) this.scheduler.hint(options.settingsIds, monotonicNow());
    this.woken = true;
    this.wakeUp?.();
  }

  /** These settings were deleted: their endpoints' circuits and due times go (EndpointScheduler.forget). */
  forget(settingsIds: Iterable<string>): void {
    this.scheduler.forget(settingsIds);
    this.metrics.openCircuits.set(this.scheduler.openCircuits());
  }

  private async run(): Promise<void> {
    const { WEBHOOK_CONCURRENCY: concurrency, WEBHOOK_POLL_MS: poll } = this.config;
    while (!this.stopped) {
      try {
        this.woken = false;
        if (monotonicNow() - this.lastDiscovery >= poll) {
          this.lastDiscovery = monotonicNow();
          const since = this.scheduler.beginDiscovery();
          const { scheduled, resends } = await this.deliveries.dueEndpoints();
          this.scheduler.discovered(scheduled, monotonicNow(), since, resends);
          await this.forgetDeleted();
          this.metrics.openCircuits.set(this.scheduler.openCircuits());
        }
        const free = concurrency - this.running.size;
        if (free > 0 && (await this.claimAndStart(free))) continue; // there may be more due
        const now = monotonicNow();
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

  /**
   * Drops the circuits kept with nothing pending whose settings are deleted or gone: another replica
   * (or a request that died here) deleted them, and nothing else would ever close those circuits.
   */
  private async forgetDeleted(): Promise<void> {
    const idle = this.scheduler.idleCircuits();
    if (idle.length === 0) return;
    const live = await this.deliveries.liveSettings(idle);
    this.scheduler.forget(idle.filter((id) => !live.has(id)));
  }

  /**
   * Claims and starts up to `free` deliveries, each endpoint's resends first within its share; true
   * when a claim was filled (more may be due).
   */
  private async claimAndStart(free: number): Promise<boolean> {
    const lease = this.config.WEBHOOK_LEASE_MS;
    const allocation = this.scheduler.allocate(
      Math.min(free, this.config.WEBHOOK_CLAIM_BATCH),
      monotonicNow(),
    );
    let filled = false;
    if (allocation.resends.size > 0) {
      const resends = await this.deliveries.claimResends(allocation.resends, lease);
      filled = this.scheduler.resendsClaimed(allocation, countBySetting(resends));
      for (const job of resends) this.start(job);
    }
    if (allocation.rows.size === 0) return filled;
    const jobs = await this.deliveries.claimWebhooks(
      allocation.rows,
      lease,
      this.config.WEBHOOK_RETRY_UNIT_MS,
    );
    const got = countBySetting(jobs);
    for (const [settingsId, asked] of allocation.rows) {
      const claimed = got.get(settingsId) ?? 0;
      this.scheduler.claimed(settingsId, asked, claimed, allocation, monotonicNow());
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
          // Not recorded: once the lease runs out, the next claim records the attempt as lost,
          // counts it and schedules the next as after a failure (a resend is simply sent again). Our
          // database failing says nothing about the receiver: its circuit is not judged (a probe's
          // circuit opens again for the same cool-down).
          this.logger.error(`Webhook ${job.webhookId}: attempt not recorded: ${String(error)}`);
          this.scheduler.released(job.settingsId, monotonicNow(), job.kind === 'resend');
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
    const now = monotonicNow();
    if (outcome.unsent) {
      // Not sent (its secrets did not open here): not the receiver's doing, its circuit is not judged.
      this.scheduler.unsent(job.settingsId, now, job.kind === 'resend');
      return;
    }
    if (job.kind === 'scheduled' && outcome.retryDelayMs !== null)
      this.scheduler.rescheduled(job.settingsId, now + outcome.retryDelayMs);
    const change =
      job.kind === 'scheduled'
        ? this.scheduler.finished(job.settingsId, outcome.verdict, now)
        : // A resend elsewhere says nothing about the endpoint.
          this.scheduler.resendFinished(job.settingsId, job.toSettingsUrl ? outcome.verdict : null, now);
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

function countBySetting(jobs: readonly DeliveryJob[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const job of jobs) counts.set(job.settingsId, (counts.get(job.settingsId) ?? 0) + 1);
  return counts;
}

/**
 * The time every wait of the loop and of the scheduler is measured on: monotonic, so a wall clock
 * stepped back (NTP, a resumed VM) does not stall discovery and every due time by the size of the
 * step. The database keeps the real due times (`next_attempt_at`, leases) in its own clock.
 */
function monotonicNow(): number {
  return performance.now();
}
