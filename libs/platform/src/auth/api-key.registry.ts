import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { KV } from '@nats-io/kv';
import { decodeRecord, hashApiKey, isGuid, type ApiKeyRecord } from './api-keys.js';
import { API_KEYS_KV } from '../messaging/tokens.js';

/**
 * In-memory view of the API_KEYS bucket, kept current by a KV watch so a revoked key stops working
 * in every service within a second. A key not yet seen by the watch is looked up directly.
 */
@Injectable()
export class ApiKeyRegistry implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ApiKeyRegistry.name);
  private readonly byHash = new Map<string, ApiKeyRecord>();
  private stopWatch?: () => void;

  constructor(@Inject(API_KEYS_KV) private readonly kv: KV) {}

  async onModuleInit(): Promise<void> {
    const watcher = await this.kv.watch();
    this.stopWatch = () => watcher.stop();
    void (async () => {
      for await (const entry of watcher) {
        if (entry.operation === 'PUT') {
          const record = decodeRecord(entry.string());
          if (record) this.byHash.set(entry.key, record);
        } else {
          this.byHash.delete(entry.key);
        }
      }
    })().catch((error: unknown) => this.logger.error(`API key watch stopped: ${String(error)}`));
  }

  onApplicationShutdown(): void {
    this.stopWatch?.();
  }

  async resolve(apiKey: string): Promise<ApiKeyRecord | null> {
    if (!isGuid(apiKey)) return null;
    const hash = hashApiKey(apiKey);
    const cached = this.byHash.get(hash);
    if (cached) return cached;
    // Not cached here: only the watch writes the map, so a revocation can never be overwritten.
    return decodeRecord((await this.kv.get(hash))?.string());
  }
}
