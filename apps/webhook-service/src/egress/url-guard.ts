import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promisify } from 'node:util';
import { Inject, Injectable } from '@nestjs/common';
import type { MerchantMode } from '@byrd/contracts';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { EgressPolicy, isIpLiteral, isMetadataAddress } from './address-policy.js';

const lookupAll = promisify(dnsLookup);

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
 */
@Injectable()
export class UrlGuard {
  readonly policy: EgressPolicy;

  constructor(@Inject(WEBHOOK_CONFIG) config: WebhookConfig) {
    this.policy = new EgressPolicy({
      allowedHosts: config.WEBHOOK_ALLOWED_HOSTS,
      allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    });
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
    let addresses: LookupAddress[];
    try {
      addresses = await lookupAll(host, { all: true, verbatim: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'ERROR';
      throw new RefusedUrlError(`host ${host} does not resolve (${code})`);
    }
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
}
