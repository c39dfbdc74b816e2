import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { loadConfig, NatsContext, natsOptionsFrom, statelessConfigSchema } from '@byrd/platform';
import { PrivateNatsServer } from '@byrd/platform/testing';

/**
 * NATS over TLS with certificates of a CA of our own, as a cluster's NATS usually has (cert-manager):
 * the chart mounts the CA (and a client certificate for mutual TLS) and names the files in
 * NATS_TLS_*; a service connects with them, and without them it cannot trust the server.
 */
describe('NATS over TLS (NATS_TLS_*)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'byrd-nats-tls-'));
  const file = (name: string) => join(dir, name);
  let tls: PrivateNatsServer;
  let mutual: PrivateNatsServer;
  const opened: NatsContext[] = [];

  beforeAll(async () => {
    issueCertificates(dir);
    const serverTls = ['--tls', '--tlscert', file('server.crt'), '--tlskey', file('server.key')];
    tls = await PrivateNatsServer.start(serverTls);
    mutual = await PrivateNatsServer.start([...serverTls, '--tlsverify', '--tlscacert', file('ca.crt')]);
  });
  afterAll(async () => {
    await Promise.all(opened.map((nats) => nats.nc.close()));
    await Promise.all([tls?.remove(), mutual?.remove()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Connects as a service does, from its environment, and uses JetStream (a KV bucket). */
  async function connectAsService(env: Record<string, string>): Promise<void> {
    const config = loadConfig(statelessConfigSchema, env);
    const nats = await NatsContext.open(natsOptionsFrom(config, 'tls-test'), '');
    opened.push(nats);
    await (await nats.kv('TLS_CHECK')).put('reached', 'yes');
  }
  const url = (server: PrivateNatsServer) => `tls://127.0.0.1:${server.port}`;

  it("connects with the CA named in NATS_TLS_CA_FILE, and cannot trust the server's certificate without it", async () => {
    await expect(connectAsService({ NATS_URL: url(tls) })).rejects.toThrow(/certificate/i);
    await connectAsService({ NATS_URL: url(tls), NATS_TLS_CA_FILE: file('ca.crt') });
  });

  it('presents the client certificate of NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE to a server that verifies clients', async () => {
    // Without one the server drops the connection (the client would wait its 20 s connect timeout: 2 s here).
    const anonymous = connect({ servers: url(mutual), tls: { caFile: file('ca.crt') }, timeout: 2_000 });
    await expect(anonymous).rejects.toThrow();
    await connectAsService({
      NATS_URL: url(mutual),
      NATS_TLS_CA_FILE: file('ca.crt'),
      NATS_TLS_CERT_FILE: file('client.crt'),
      NATS_TLS_KEY_FILE: file('client.key'),
    });
  });
});

/** A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by it (openssl). */
function issueCertificates(dir: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...key, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=byrd test CA');
  // localhost too: for a server given by IP address the client checks the name Node defaults to.
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, subject] of [
    ['server', '/CN=127.0.0.1'],
    ['client', '/CN=byrd'],
  ] as const) {
    openssl('req', ...key, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    openssl(
      'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
      '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`,
    );
  }
}
