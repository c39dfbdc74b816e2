import { createHash, randomUUID } from 'node:crypto';
import type { KV } from '@nats-io/kv';

export type MerchantMode = 'sandbox' | 'live';

/** What the API_KEYS bucket stores under the SHA-256 hash of a key. The key itself is never stored. */
export interface ApiKeyRecord {
  merchantId: string;
  merchantName: string;
  mode: MerchantMode;
  scopes: string[];
  createdAt: string;
}

/** The merchant a request acts for, as resolved from its credential. */
export interface MerchantContext {
  merchantId: string;
  merchantName: string;
  mode: MerchantMode;
  scopes: string[];
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey.trim().toLowerCase()).digest('hex');
}

export function isGuid(value: string): boolean {
  return GUID.test(value);
}

export function newApiKey(): string {
  return randomUUID();
}

/** Writes and revokes keys; used by the CLI and test helpers. */
export class ApiKeyStore {
  constructor(private readonly kv: KV) {}

  async issue(merchant: Omit<ApiKeyRecord, 'createdAt'>): Promise<string> {
    const apiKey = newApiKey();
    const record: ApiKeyRecord = { ...merchant, createdAt: new Date().toISOString() };
    await this.kv.put(hashApiKey(apiKey), JSON.stringify(record));
    return apiKey;
  }

  async find(apiKey: string): Promise<ApiKeyRecord | null> {
    if (!isGuid(apiKey)) return null;
    return decodeRecord((await this.kv.get(hashApiKey(apiKey)))?.string());
  }

  /** Returns false when the key was not known. */
  async revoke(apiKey: string): Promise<boolean> {
    if (!(await this.find(apiKey))) return false;
    await this.kv.delete(hashApiKey(apiKey));
    return true;
  }
}

export function decodeRecord(raw: string | undefined): ApiKeyRecord | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Partial<ApiKeyRecord>;
    if (typeof value.merchantId !== 'string' || (value.mode !== 'sandbox' && value.mode !== 'live'))
      return null;
    return {
      merchantId: value.merchantId,
      merchantName: value.merchantName ?? '',
      mode: value.mode,
      scopes: Array.isArray(value.scopes) ? value.scopes : [],
      createdAt: value.createdAt ?? '',
    };
  } catch {
    return null;
  }
}
