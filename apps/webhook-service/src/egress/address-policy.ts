import ipaddr from 'ipaddr.js';

/** Ranges that `WEBHOOK_ALLOW_PRIVATE_NETWORKS` opens (development receivers on this machine or LAN). */
const PRIVATE_NETWORK_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat']);

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private network address',
  uniqueLocal: 'a private (unique local) address',
  carrierGradeNat: 'a carrier-grade NAT address',
  linkLocal: 'a link-local address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
  ipv4Compatible: 'an IPv4-compatible IPv6 address',
};

/**
 * Cloud instance metadata and host endpoints, refused in every mode, even when an allow-list entry
 * or the private-network flag would open their range: a webhook that reaches one hands the
 * instance's credentials to whoever chose the URL.
 */
const METADATA_ADDRESSES = new Set([
  '169.254.169.254', // AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack, Hetzner, ...
  '169.254.170.2', // AWS ECS task metadata and credentials
  '169.254.170.23', // AWS EKS pod identity agent
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS EKS pod identity over IPv6
  'fd20:ce::254', // GCP metadata over IPv6
  '168.63.129.16', // Azure WireServer (host agent)
  '100.100.100.200', // Alibaba Cloud (inside the carrier-grade NAT range)
  '192.0.0.192', // Oracle Cloud (legacy)
]);

/** True for a cloud metadata address, in any of its IPv4 or IPv6 spellings. */
export function isMetadataAddress(address: string): boolean {
  return METADATA_ADDRESSES.has(classifyAddress(address).normalized);
}

export interface AddressClass {
  /** ipaddr.js range name (`unicast` = public), after unwrapping IPv4-mapped IPv6. */
  range: string;
  /** The address as classified (IPv4 for an IPv4-mapped IPv6 address). */
  normalized: string;
  /** Words for an error message, e.g. "a loopback address". */
  description: string;
}

/** Classifies an IP literal (v4 or v6); throws on anything that is not one. */
export function classifyAddress(address: string): AddressClass {
  let parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    else if (v6.parts.slice(0, 6).every((p) => p === 0) && v6.range() === 'unicast') {
      // ::a.b.c.d (deprecated IPv4-compatible form): never a real public destination.
      return { range: 'ipv4Compatible', normalized: v6.toString(), description: RANGE_WORDS.ipv4Compatible };
    }
  }
  const normalized = parsed.toString();
  const range = parsed.range();
  const description = METADATA_ADDRESSES.has(normalized)
    ? 'the cloud metadata address'
    : (RANGE_WORDS[range] ?? `a special-purpose address (${range})`);
  return { range, normalized, description };
}

export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ''));
}

export interface EgressPolicyOptions {
  /** Host names / IP literals (exact, lowercase) and CIDR ranges that are allowed anyway. */
  allowedHosts: readonly string[];
  /** Open loopback, private, unique-local and CGNAT ranges (development). */
  allowPrivateNetworks: boolean;
}

/**
 * Which addresses a webhook may be sent to. Only public unicast addresses, unless the operator's
 * allow-list names the host (or a CIDR holding the address), or the development flag opens private
 * networks. Link-local (cloud metadata), unspecified, multicast and reserved addresses stay refused
 * unless explicitly allow-listed.
 */
export class EgressPolicy {
  private readonly hosts: ReadonlySet<string>;
  private readonly cidrs: [ipaddr.IPv4 | ipaddr.IPv6, number][];

  constructor(readonly options: EgressPolicyOptions) {
    const hosts = new Set<string>();
    this.cidrs = [];
    for (const entry of options.allowedHosts) {
      if (entry.includes('/')) this.cidrs.push(ipaddr.parseCIDR(entry));
      else hosts.add(entry.replace(/^\[|\]$/g, '').toLowerCase());
    }
    this.hosts = hosts;
  }

  /** Whether the URL's host itself is on the allow-list (then whatever it resolves to is accepted). */
  hostAllowed(host: string): boolean {
    return this.hosts.has(host.replace(/^\[|\]$/g, '').toLowerCase());
  }

  /** Null when `address` may be connected to, else why not (for an error message). */
  refusal(address: string): string | null {
    const found = classifyAddress(address);
    if (METADATA_ADDRESSES.has(found.normalized)) return `${found.normalized} is ${found.description}`;
    if (found.range === 'unicast') return null;
    if (this.inAllowedCidr(found.normalized)) return null;
    if (this.options.allowPrivateNetworks && PRIVATE_NETWORK_RANGES.has(found.range)) return null;
    return `${found.normalized} is ${found.description}`;
  }

  private inAllowedCidr(address: string): boolean {
    const parsed = ipaddr.parse(address);
    return this.cidrs.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  }
}

/** Config check: every allow-list entry must be a host name, an IP or a CIDR. */
export function invalidAllowListEntries(entries: readonly string[]): string[] {
  return entries.filter((entry) => {
    if (entry.includes('/')) {
      try {
        ipaddr.parseCIDR(entry);
        return false;
      } catch {
        return true;
      }
    }
    return !/^[a-z0-9.-]+$/.test(entry) && !isIpLiteral(entry);
  });
}
