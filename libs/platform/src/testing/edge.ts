import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface EdgeProcess {
  url: string;
  close(): Promise<void>;
}

interface RouteTable {
  services: Record<string, { port: number; host?: string }>;
  routes: { prefix: string; service: string }[];
}

/** The repository root: the nearest folder above `from` holding deploy/routes.json. */
function repositoryRoot(from = process.cwd()): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'deploy/routes.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no deploy/routes.json above ${from}`);
  }
}

/**
 * The local edge (deploy/local/edge.mjs, as `npm start` runs it: its own process) in front of one
 * service of a test listening on `port`: that service's routes of the real route table only. A
 * process rather than an import keeps deploy/ out of the apps' dependencies (and their images).
 */
export async function startEdgeProcess(
  service: string,
  port: number,
  timeoutMs = 15_000,
): Promise<EdgeProcess> {
  const root = repositoryRoot();
  const table = JSON.parse(readFileSync(join(root, 'deploy/routes.json'), 'utf8')) as RouteTable;
  const routes = table.routes.filter((route) => route.service === service);
  if (routes.length === 0) throw new Error(`deploy/routes.json routes nothing to "${service}"`);
  const dir = mkdtempSync(join(tmpdir(), 'byrd-edge-'));
  const routesFile = join(dir, 'routes.json');
  writeFileSync(
    routesFile,
    JSON.stringify({ services: { [service]: { ...table.services[service], port } }, routes }),
  );

  const child = spawn(process.execPath, [join(root, 'deploy/local/edge.mjs')], {
    env: { PATH: process.env.PATH, ROUTES_FILE: routesFile, EDGE_PORT: '0', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const cleanUp = () => rmSync(dir, { recursive: true, force: true });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the edge did not start: ${output}`)), timeoutMs);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /edge listening on (http:\/\/\S+)/.exec(output);
      if (listening) {
        clearTimeout(timer);
        resolve(listening[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the edge exited: ${output}`));
    });
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    cleanUp();
    throw error;
  });
  return {
    url,
    close: async () => {
      child.kill('SIGTERM');
      await exited;
      cleanUp();
    },
  };
}
