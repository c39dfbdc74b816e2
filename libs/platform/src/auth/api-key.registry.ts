import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { KV } from '@nats-io/kv';
import { decodeRecord, hashApiKey, isGuid, type ApiKeyRecord } from './api-keys.js';
import { API_KEYS_KV, NATS_CONTEXT } from '../messaging/tokens.js';
import type { NatsContext } from '../messaging/nats.js';

/** A cached key and the watch that wrote it: only the current watch's entries are trusted. */
interface CachedKey {
  record: ApiKeyRecord;
  watch: number;
}

const RESTART_DELAY_MS = 250;

/**
 * In-memory view of the API_KEYS bucket, kept current by a KV watch so a revoked key stops working
 * in every service within a second. A key not confirmed by the current watch is looked up directly.
 *
 * The watch is started again whenever it may have missed something: after the connection to NATS is
 * re-established (the library's own consumer would notice only after its heartbeats fail, about a
 * minute later) and whenever it ends on its own. No entry of an earlier watch is trusted again until
 * the new one confirms it (its initial values report every key, a revoked one as deleted). While the
 * broker is down the cache is trusted as it is: no revocation can be written then either.
 */
@Injectable()
export class ApiKeyRegistry implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ApiKeyRegistry.name);
  private readonly byHash = new Map<string, CachedKey>();
  /** The number of the current watch; entries written by an earlier one are not trusted. */
  private watch = 0;
  private stopWatch?: () => void;
  private stopped = false;

  constructor(
    @Inject(API_KEYS_KV) private readonly kv: KV,
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.startWatch();
    void this.restartOnReconnect();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    this.stopWatch?.();
  }

  async resolve(apiKey: string): Promise<ApiKeyRecord | null> {
    if (!isGuid(apiKey)) return null;
    const hash = hashApiKey(apiKey);
    const cached = this.byHash.get(hash);
    if (cached?.watch === this.watch) return cached.record;
    // Not cached here: only the watch writes the map, so a revocation can never be overwritten.
    try {
      return decodeRecord((await this.kv.get(hash))?.string());
    } catch (error) {
      // The bucket cannot answer (the broker is restarting): no revocation can be written either,
      // so a key known before still works, as it does while the broker is away.
      if (cached) return cached.record;
      throw error;
    }
  }

  /** Whether the current watch has confirmed this key, so `resolve` answers it from memory. */
  knows(apiKey: string): boolean {
    return isGuid(apiKey) && this.byHash.get(hashApiKey(apiKey))?.watch === this.watch;
  }

  /** Starts a new watch (the previous one stops). Throws when the bucket cannot be watched now. */
  private async startWatch(): Promise<void> {
    this.stopWatch?.();
    // From now on, until the new watch confirms them, keys are looked up directly.
    const watch = ++this.watch;
    const watcher = await this.kv.watch();
    if (this.stopped || watch !== this.watch) {
      watcher.stop();
      return;
    }
    this.stopWatch = () => watcher.stop();
    void (async () => {
      for await (const entry of watcher) {
        if (watch !== this.watch) return;
        const record = entry.operation === 'PUT' ? decodeRecord(entry.string()) : null;
        if (record) this.byHash.set(entry.key, { record, watch });
        else this.byHash.delete(entry.key);
      }
      if (watch === this.watch && !this.stopped) throw new Error('the watch ended');
    })().catch((error: unknown) => {
      if (watch !== this.watch || this.stopped) return;
      this.logger.warn(`API key watch stopped (${String(error)}); starting it again`);
      void this.restartUntilWatching();
    });
  }

  private async restartUntilWatching(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.startWatch();
        return;
      } catch (error) {
        this.logger.warn(`API key watch could not start: ${String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS));
      }
    }
  }

  private async restartOnReconnect(): Promise<void> {
    for await (const status of this.nats.nc.status()) {
      if (this.stopped) return;
      if (status.type === 'reconnect') void this.restartUntilWatching();
    }
  }
}
