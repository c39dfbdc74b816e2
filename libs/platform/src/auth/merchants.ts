import { randomUUID } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { ApiKeyStore, type MerchantMode } from './api-keys.js';

export interface Merchant {
  merchantId: string;
  name: string;
  mode: MerchantMode;
  createdAt: string;
}

/** Merchant registry (KV bucket MERCHANTS) and key issuance, used by the CLI and tests. */
export class MerchantDirectory {
  private readonly keys: ApiKeyStore;

  constructor(
    private readonly merchants: KV,
    apiKeys: KV,
  ) {
    this.keys = new ApiKeyStore(apiKeys);
  }

  async create(name: string, mode: MerchantMode): Promise<{ merchant: Merchant; apiKey: string }> {
    const merchant: Merchant = { merchantId: randomUUID(), name, mode, createdAt: new Date().toISOString() };
    await this.merchants.create(merchant.merchantId, JSON.stringify(merchant));
    return { merchant, apiKey: await this.issueKey(merchant) };
  }

  async get(merchantId: string): Promise<Merchant | null> {
    const entry = await this.merchants.get(merchantId);
    return entry && entry.operation === 'PUT' ? (entry.json<Merchant>() ?? null) : null;
  }

  async list(): Promise<Merchant[]> {
    const result: Merchant[] = [];
    for await (const key of await this.merchants.keys()) {
      const merchant = await this.get(key);
      if (merchant) result.push(merchant);
    }
    return result.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  issueKey(merchant: Merchant, scopes: string[] = []): Promise<string> {
    return this.keys.issue({
      merchantId: merchant.merchantId,
      merchantName: merchant.name,
      mode: merchant.mode,
      scopes,
    });
  }

  revokeKey(apiKey: string): Promise<boolean> {
    return this.keys.revoke(apiKey);
  }

  findKey(apiKey: string) {
    return this.keys.find(apiKey);
  }
}
