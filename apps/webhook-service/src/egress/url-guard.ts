import {
  getDefaultResultOrder,
  lookup as systemLookup,
  promises as dnsPromises,
  type LookupAddress,
} from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import { Inject, Injectable, type OnApplicationShutdown, Optional } from '@nestjs/common';
import type { MerchantMode } from '@byrd/contracts';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { EgressPolicy, isIpLiteral, isMetadataAddress } from './address-policy.js';

/**
 * Name servers (`host` or `host:port`) that resolve receivers' host names instead of the system's
 * (/etc/resolv.conf). Not configurable: tests provide it to point the guard at a name server of theirs.
 */
export const RECEIVER_NAME_SERVERS = Symbol('RECEIVER_NAME_SERVERS');

/** The names /etc/hosts gives; read again when older than this, so an edit is seen without a restart. */
const HOSTS_FILE = '/etc/hosts';
const HOSTS_FILE_MAX_AGE_MS = 5_000;
const lookupAll = promisify(systemLookup);

/** A receiver URL that may not be used, with the reason in a sentence. */
export class RefusedUrlError extends Error {
  override name = 'RefusedUrlError';
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * SSRF guard of the webhook service. A receiver URL is checked when a setting is created (and for a
 * resend to another address), and again for every connection a delivery opens: the connection's own
 * DNS lookup goes through {@link UrlGuard.lookup}, so the address vetted is the address connected to
 * (no second resolution an attacker's DNS could answer differently).
 *
 * Host names are resolved by c-ares (A and AAAA queries on the event loop), never by `dns.lookup`:
 * getaddrinfo runs on libuv's small thread pool, so a merchant whose name server never answers would
 * hold its threads for the resolver's whole timeout and every other merchant's lookups would queue
 * behind it. Each resolution ends within WEBHOOK_TIMEOUT_MS whatever its name server does. Names in
 * /etc/hosts resolve as there (c-ares queries do not read it), and `localhost` and `*.localhost`
 * are loopback without asking a name server (RFC 6761). A single-label name (an in-cluster service)
 * goes to getaddrinfo, for resolv.conf's search domains.
 */
@Injectable()
export class UrlGuard implements OnApplicationShutdown {
  readonly policy: EgressPolicy;
  private readonly resolver: dnsPromises.Resolver;
  private readonly resolveTimeoutMs: number;
  private readonly hostsFile = new HostsFile(HOSTS_FILE, HOSTS_FILE_MAX_AGE_MS);

  constructor(
    @Inject(WEBHOOK_CONFIG) config: WebhookConfig,
    @Optional() @Inject(RECEIVER_NAME_SERVERS) nameServers?: readonly string[],
  ) {
    this.policy = new EgressPolicy({
      allowedHosts: config.WEBHOOK_ALLOWED_HOSTS,
      allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    });
    this.resolveTimeoutMs = config.WEBHOOK_TIMEOUT_MS;
    // Two tries per query (one lost UDP packet is no failure), the second waiting twice as long; the
    // deadline in `queryAddresses` bounds the whole lookup whatever c-ares does.
    this.resolver = new dnsPromises.Resolver({
      timeout: Math.max(1, Math.floor(this.resolveTimeoutMs / 3)),
      tries: 2,
    });
    if (nameServers?.length) this.resolver.setServers(nameServers);
  }

  onApplicationShutdown(): void {
    this.resolver.cancel();
  }

  /**
   * Checks a receiver URL for a merchant: http(s), https for live merchants, no credentials in it,
   * and a host that resolves only to addresses the policy allows.
   * @throws RefusedUrlError naming the problem.
   */
  async vet(raw: string, mode: MerchantMode): Promise<URL> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new RefusedUrlError('must be an absolute http(s) URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new RefusedUrlError('must be an http or https URL');
    if (mode === 'live' && url.protocol !== 'https:')
      throw new RefusedUrlError('must use https for a live merchant');
    if (url.username || url.password)
      throw new RefusedUrlError('must not carry a user name or password (choose credentialType basic)');
    this.checkLiteral(url.hostname);
    if (!isIpLiteral(url.hostname)) await this.resolve(url.hostname);
    return url;
  }

  /** For a URL whose host is an IP literal (no lookup happens for those). @throws RefusedUrlError */
  checkLiteral(host: string): void {
    if (!isIpLiteral(host)) return;
    if (this.policy.hostAllowed(host) && !isMetadataAddress(host)) return;
    const refusal = this.policy.refusal(host);
    if (refusal) throw new RefusedUrlError(`is refused: ${refusal}`);
  }

  /** Resolves a host name and checks every address. @throws RefusedUrlError */
  async resolve(host: string): Promise<LookupAddress[]> {
    const addresses = await this.addressesOf(host);
    if (addresses.length === 0) throw new RefusedUrlError(`host ${host} does not resolve`);
    if (this.policy.hostAllowed(host) && !addresses.some(({ address }) => isMetadataAddress(address)))
      return addresses;
    for (const { address } of addresses) {
      const refusal = this.policy.refusal(address);
      if (refusal) throw new RefusedUrlError(`is refused: ${host} resolves to ${refusal}`);
    }
    return addresses;
  }

  /**
   * `lookup` for net/tls.connect: resolves, refuses the connection when any address is not allowed,
   * else hands the vetted addresses to the socket.
   */
  readonly lookup = (
    hostname: string,
    options: { all?: boolean } | number,
    callback: LookupCallback,
  ): void => {
    this.resolve(hostname).then(
      (addresses) => {
        if (typeof options === 'object' && options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: Error) => {
        const refused = Object.assign(new Error(`The receiver URL ${error.message}`), {
          code: 'EREFUSED_ADDRESS',
        });
        callback(refused, '', 0);
      },
    );
  };

  /**
   * A host name's addresses (IP literals never get here: `vet` and the sender check them, and a
   * socket does not look them up): /etc/hosts, then localhost, then DNS (a single label: getaddrinfo).
   * @throws RefusedUrlError
   */
  private async addressesOf(host: string): Promise<LookupAddress[]> {
    const name = host.toLowerCase().replace(/\.$/, '');
    const known = this.hostsFile.lookup(name);
    if (known) return known;
    if (name === 'localhost' || name.endsWith('.localhost'))
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    // A single label (an in-cluster service name) resolves through resolv.conf's search domains, as
    // getaddrinfo does. No merchant's name server can answer it (the search domains' and the root's
    // do), so it cannot hold the pool's threads the way a name under a merchant's domain can.
    if (!name.includes('.')) return this.systemAddresses(host);
    return this.queryAddresses(host);
  }

  /** getaddrinfo's answer (search domains, nsswitch). @throws RefusedUrlError */
  private async systemAddresses(host: string): Promise<LookupAddress[]> {
    try {
      return await lookupAll(host, { all: true, verbatim: true });
    } catch (error) {
      throw unresolved(host, (error as NodeJS.ErrnoException).code ?? 'ERROR');
    }
  }

  /**
   * A and AAAA records of `host`, each family in the order its name server gave (IPv6 first only
   * when Node's default result order says so). A query c-ares gave up on is asked again until
   * WEBHOOK_TIMEOUT_MS has passed (c-ares shortens its tries by its own round-trip estimates); then a
   * family that has not answered counts as not found, and when neither gave an address the host does
   * not resolve.
   * @throws RefusedUrlError
   */
  private async queryAddresses(host: string): Promise<LookupAddress[]> {
    type Answer = { addresses: LookupAddress[] } | { code: string };
    let expired = false;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<Answer>((resolve) => {
      timer = setTimeout(() => {
        expired = true;
        resolve({ code: 'ETIMEOUT' });
      }, this.resolveTimeoutMs);
    });
    const ask = async (family: 4 | 6): Promise<Answer> => {
      for (;;) {
        const answer: Answer = await (
          family === 4 ? this.resolver.resolve4(host) : this.resolver.resolve6(host)
        ).then(
          (found) => ({ addresses: found.map((address) => ({ address, family })) }),
          (error: NodeJS.ErrnoException) => ({ code: error.code ?? 'ERROR' }),
        );
        if (expired || !('code' in answer) || answer.code !== 'ETIMEOUT') return answer;
      }
    };
    let answers: Answer[];
    try {
      answers = await Promise.all([Promise.race([ask(4), deadline]), Promise.race([ask(6), deadline])]);
    } finally {
      expired = true;
      clearTimeout(timer);
    }
    if (getDefaultResultOrder() === 'ipv6first') answers.reverse();
    const addresses = answers.flatMap((answer) => ('addresses' in answer ? answer.addresses : []));
    if (addresses.length > 0) return addresses;
    const codes = answers.map((answer) => ('code' in answer ? answer.code : 'ENODATA'));
    if (codes.includes('ENOTFOUND')) throw unresolved(host, 'ENOTFOUND');
    if (codes.includes('ETIMEOUT'))
      throw unresolved(host, `ETIMEOUT: its name server did not answer within ${this.resolveTimeoutMs} ms`);
    throw unresolved(host, codes.find((c) => c !== 'ENODATA') ?? 'ENODATA');
  }
}

/** The refusal of a host that does not resolve, with why (a resolver's error code). */
function unresolved(host: string, why: string): RefusedUrlError {
  return new RefusedUrlError(`host ${host} does not resolve (${why})`);
}

/** The host-name lines of an /etc/hosts-style file, read without libuv's thread pool. */
class HostsFile {
  private names = new Map<string, LookupAddress[]>();
  private readAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly path: string,
    private readonly maxAgeMs: number,
  ) {}

  /** The addresses the file gives `name` (lowercase, no trailing dot), in file order. */
  lookup(name: string): LookupAddress[] | undefined {
    if (performance.now() - this.readAt > this.maxAgeMs) this.read();
    return this.names.get(name);
  }

  private read(): void {
    let text = '';
    try {
      // A few hundred bytes of a local file: synchronous, so it never queues behind a busy pool.
      text = readFileSync(this.path, 'utf8');
    } catch {
      // No hosts file: no names from it.
    }
    const names = new Map<string, LookupAddress[]>();
    for (const line of text.split('\n')) {
      const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
      const family = isIP(address ?? '');
      if (!family) continue;
      for (const alias of aliases) {
        const key = alias.toLowerCase().replace(/\.$/, '');
        const list = names.get(key) ?? [];
        if (!list.some((known) => known.address === address)) list.push({ address, family });
        names.set(key, list);
      }
    }
    this.names = names;
    this.readAt = performance.now();
  }
}
