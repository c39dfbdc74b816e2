import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { KV } from '@nats-io/kv';
import { isFQDN, isIP } from 'class-validator';
import { MAX_CHECKOUT_ORIGINS } from '@byrd/contracts';
import { isKvWriteConflict } from '../messaging/nats.js';
import { ApiKeyStore, type MerchantMode } from './api-keys.js';

export interface Merchant {
  merchantId: string;
  name: string;
  mode: MerchantMode;
  createdAt: string;
  /**
   * Origins of the merchant's own sites (`https://shop.example.com`) the hosted form may send a
   * shopper back to (a `configs.redirectUrl` elsewhere is ignored), post its messages to, and be
   * framed by. Absent or empty: only the origin of each order's own redirectUrl.
   */
  checkoutOrigins?: string[];
}

/**
 * The origin of an allow-list entry (`https://shop.example.com`, a port allowed), or why it is
 * refused: a scheme and host only (no path, query, fragment or credentials), https for live
 * merchants (http also for sandbox ones, for shops on a developer's machine). The host must be a
 * DNS host name (an IDN as URL's punycode; `localhost` too), an IPv4 address or a bracketed IPv6
 * literal: URL also takes `*`, `;`, `,` or `'` in a host, and the origin ends up verbatim in the
 * hosted form's CSP `frame-ancestors`, where `https://*` would let any site frame it.
 */
export function checkoutOriginOf(
  entry: string,
  mode: MerchantMode,
): { origin: string } | { problem: string } {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return { problem: `"${entry}" is not an origin such as https://shop.example.com` };
  }
  const schemes = mode === 'live' ? ['https:'] : ['https:', 'http:'];
  if (!schemes.includes(url.protocol))
    return { problem: `"${entry}" must use ${mode === 'live' ? 'https' : 'http or https'}` };
  const bare = url.pathname === '/' && !/[?#]/.test(entry) && !url.username && !url.password;
  if (!bare)
    return { problem: `"${entry}" must be an origin only (scheme, host and port; no path, query or user)` };
  if (!isOriginHost(url.hostname))
    return {
      problem: `"${entry}" is not an origin: its host "${url.hostname}" is not a host name or IP address`,
    };
  return { origin: url.origin };
}

/** A URL's `hostname` (already ASCII and lower-case) that is a DNS name, an IPv4 address or `[IPv6]`. */
function isOriginHost(hostname: string): boolean {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return isIP(hostname.slice(1, -1), '6');
  return (
    isIP(hostname, '4') ||
    // Letters, digits and hyphens in labels of at most 63, no label starting or ending with a hyphen.
    (/^[a-z0-9.-]+$/.test(hostname) && hostname.length <= 253 && isFQDN(hostname, { require_tld: false }))
  );
}

/** Whether `origin` is an origin {@link checkoutOriginOf} accepts as it is (what a header may hold). */
export function isCheckoutOrigin(origin: string, mode: MerchantMode): boolean {
  const checked = checkoutOriginOf(origin, mode);
  return 'origin' in checked && checked.origin === origin;
}

/**
 * Where a shopper holding only an order's checkout key may be sent back to: the origin of the
 * order's own redirectUrl and the merchant's checkout origins, once each. A return address that
 * such a shopper writes (the hosted form's unsigned `configs.redirectUrl`, a `?checkoutKey=`
 * payment's `redirectUrl`) counts only on one of these; anyone holding the order's link could
 * otherwise make our pages send shoppers anywhere.
 */
export function allowedCheckoutOrigins(
  redirectUrl: string | null,
  merchantOrigins: readonly string[],
): string[] {
  const origins = new Set<string>();
  if (redirectUrl && URL.canParse(redirectUrl)) {
    const { origin, protocol } = new URL(redirectUrl);
    if (protocol === 'https:' || protocol === 'http:') origins.add(origin);
  }
  for (const origin of merchantOrigins) origins.add(origin);
  return [...origins];
}

/** Merchant registry (KV bucket MERCHANTS) and key issuance: the CLI, the tests, and the services' checkout origins. */
export class MerchantDirectory {
  private readonly keys: ApiKeyStore;
  private readonly logger = new Logger(MerchantDirectory.name);
  /** Merchants whose stored refused origins this process has logged (once each). */
  private readonly refusalsLogged = new Set<string>();

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

  /**
   * Replaces the merchant's checkout origins (each checked and normalised by {@link checkoutOriginOf});
   * returns them, or null when the merchant does not exist.
   * @throws RangeError naming the first refused entry
   */
  async setCheckoutOrigins(merchantId: string, entries: readonly string[]): Promise<string[] | null> {
    if (entries.length > MAX_CHECKOUT_ORIGINS)
      throw new RangeError(`at most ${MAX_CHECKOUT_ORIGINS} origins may be listed`);
    for (;;) {
      const entry = await this.merchants.get(merchantId);
      const merchant = entry && entry.operation === 'PUT' ? entry.json<Merchant>() : null;
      if (!entry || !merchant) return null;
      const origins: string[] = [];
      for (const raw of entries) {
        const checked = checkoutOriginOf(raw, merchant.mode);
        if ('problem' in checked) throw new RangeError(checked.problem);
        if (!origins.includes(checked.origin)) origins.push(checked.origin);
      }
      try {
        // Compare-and-set: a concurrent change of the record (another call, the CLI) is not lost.
        await this.merchants.update(
          merchantId,
          JSON.stringify({ ...merchant, checkoutOrigins: origins }),
          entry.revision,
        );
        return origins;
      } catch (error) {
        if (!isKvWriteConflict(error)) throw error;
      }
    }
  }

  /**
   * The merchant's checkout origins; none for a merchant without a list (or unknown). An entry
   * stored before hosts were checked that {@link checkoutOriginOf} no longer accepts (`https://*`,
   * `https://a.com;sandbox`) is left out: it never reaches a CSP header or a `postMessage` target.
   * `GET /api/v2/checkout-origins` still shows it, for the merchant to set the list again.
   */
  async checkoutOrigins(merchantId: string): Promise<string[]> {
    const merchant = await this.get(merchantId);
    if (!merchant?.checkoutOrigins) return [];
    const usable = merchant.checkoutOrigins.filter((origin) => isCheckoutOrigin(origin, merchant.mode));
    if (usable.length < merchant.checkoutOrigins.length && !this.refusalsLogged.has(merchantId)) {
      // Once per merchant and process: the operator's way to find the lists to have set again.
      this.refusalsLogged.add(merchantId);
      const refused = merchant.checkoutOrigins.filter((origin) => !usable.includes(origin));
      this.logger.warn(
        `Merchant ${merchantId}: checkout origins stored before hosts were checked are left out: ` +
          refused.map((origin) => JSON.stringify(origin.slice(0, 80))).join(', '),
      );
    }
    return usable;
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
