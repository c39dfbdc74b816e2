import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './service-process.js';

const IS_ROOT = process.getuid?.() === 0;

/**
 * A PostgreSQL cluster of a test's own (initdb and pg_ctl, its own port and data folder; as root the
 * server runs as the `postgres` user), for tests that change what every database's users may do
 * (REVOKE CONNECT ... FROM PUBLIC): the machine's shared server must stay as every other test expects.
 */
export class PrivatePostgresServer {
  private readonly dir = mkdtempSync(join(tmpdir(), 'byrd-pg-'));
  private readonly dataDir = join(this.dir, 'data');

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivatePostgresServer> {
    const server = new PrivatePostgresServer(await freePort());
    if (IS_ROOT) {
      const [, , uid, gid] = readFileSync('/etc/passwd', 'utf8')
        .split('\n')
        .find((entry) => entry.startsWith('postgres:'))!
        .split(':');
      chownSync(server.dir, Number(uid), Number(gid));
    }
    server.run('initdb', ['-D', server.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const options = `-p ${server.port} -k ${server.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    server.run('pg_ctl', ['-D', server.dataDir, '-l', join(server.dir, 'log'), '-w', '-o', options, 'start']);
    return server;
  }

  /** The URL of a database of this server, as `user` (no password: trust). */
  url(database: string, user = 'postgres'): string {
    return `postgres://${user}@127.0.0.1:${this.port}/${database}`;
  }

  remove(): void {
    if (existsSync(join(this.dataDir, 'postmaster.pid')))
      this.run('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', 'stop']);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private run(tool: string, args: string[]): void {
    const binary = [
      tool,
      ...[17, 16, 15, 14].map((version) => `/usr/lib/postgresql/${version}/bin/${tool}`),
    ].find((candidate) => spawnSync(candidate, ['--version']).status === 0);
    if (!binary) throw new Error(`${tool} is not installed (PostgreSQL server binaries: apt-get install -y postgresql)`);
    // initdb and postgres refuse to run as root.
    const [command, argv] = IS_ROOT ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
    const result = spawnSync(command, argv, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  }
}
