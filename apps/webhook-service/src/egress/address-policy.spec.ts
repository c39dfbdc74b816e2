import {
  classifyAddress,
  EgressPolicy,
  isMetadataAddress,
  invalidAllowListEntries,
} from './address-policy.js';

describe('egress address policy', () => {
  const strict = new EgressPolicy({ allowedHosts: [], allowPrivateNetworks: false });

  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.9.9.9', 'a loopback address'],
    ['10.0.0.1', 'a private network address'],
    ['172.16.5.4', 'a private network address'],
    ['192.168.0.1', 'a private network address'],
    ['100.64.0.1', 'a carrier-grade NAT address'],
    ['169.254.169.254', 'the cloud metadata address'],
    ['169.254.1.1', 'a link-local address'],
    ['0.0.0.0', 'an unspecified address'],
    ['224.0.0.251', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    ['::1', 'a loopback address'],
    ['::', 'an unspecified address'],
    ['fe80::1', 'a link-local address'],
    ['fd12:3456::1', 'a private (unique local) address'],
    ['fd00:ec2::254', 'the cloud metadata address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:10.0.0.1', 'a private network address'],
    ['::ffff:169.254.169.254', 'the cloud metadata address'],
    ['::7f00:1', 'an IPv4-compatible IPv6 address'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'a special-purpose address (rfc6052)'],
    ['ff02::1', 'a multicast address'],
  ])('refuses %s (%s)', (address, description) => {
    expect(strict.refusal(address)).toContain(description);
  });

  it('allows public unicast addresses', () => {
    expect(strict.refusal('93.184.216.34')).toBeNull();
    expect(strict.refusal('2606:4700::6810:84e5')).toBeNull();
    expect(classifyAddress('::ffff:8.8.8.8')).toMatchObject({ range: 'unicast', normalized: '8.8.8.8' });
  });

  it('opens loopback and private networks for development, never link-local or metadata', () => {
    const dev = new EgressPolicy({ allowedHosts: [], allowPrivateNetworks: true });
    for (const address of [
      '127.0.0.1',
      '::1',
      '10.1.1.1',
      '192.168.1.1',
      'fd00::1',
      '100.64.1.1',
      '::ffff:127.0.0.1',
    ])
      expect(dev.refusal(address)).toBeNull();
    for (const address of ['169.254.169.254', 'fe80::1', '0.0.0.0', '224.0.0.1'])
      expect(dev.refusal(address)).not.toBeNull();
  });

  it('refuses every cloud metadata address in any spelling, whatever the settings open', () => {
    const open = new EgressPolicy({
      allowedHosts: ['169.254.0.0/16', '100.64.0.0/10', 'fd00::/8', '168.63.129.16', '192.0.0.0/24'],
      allowPrivateNetworks: true,
    });
    for (const address of [
      '169.254.169.254',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '169.254.170.2',
      'fd00:ec2::254',
      'FD00:0EC2:0000:0000:0000:0000:0000:0254',
      '[fd00:ec2::254]',
      'fd20:ce::254',
      '168.63.129.16',
      '100.100.100.200',
      '192.0.0.192',
    ]) {
      expect([address, isMetadataAddress(address)]).toEqual([address, true]);
      expect(open.refusal(address)).toMatch(/cloud metadata address/);
    }
    expect(open.refusal('169.254.1.1')).toBeNull(); // the allow-listed range itself stays open
  });

  it('allows listed hosts by name and listed CIDR ranges by address', () => {
    const listed = new EgressPolicy({
      allowedHosts: ['hooks.internal', '10.20.0.0/16', 'fd00:1::/32'],
      allowPrivateNetworks: false,
    });
    expect(listed.hostAllowed('HOOKS.internal')).toBe(true);
    expect(listed.hostAllowed('other.internal')).toBe(false);
    expect(listed.refusal('10.20.3.4')).toBeNull();
    expect(listed.refusal('10.21.3.4')).not.toBeNull();
    expect(listed.refusal('fd00:1::5')).toBeNull();
    expect(listed.refusal('::ffff:10.20.0.9')).toBeNull();
  });

  it('names allow-list entries that are not hosts, IPs or CIDRs', () => {
    expect(
      invalidAllowListEntries(['ok.example', '10.0.0.0/8', '::1', '10.0.0.0/99', 'bad host', 'x_y']),
    ).toEqual(['10.0.0.0/99', 'bad host', 'x_y']);
  });
});
