import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startServiceProcess, type ServiceProcess } from '@byrd/platform/testing';
import type { Stack } from './stack.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface HostedFormFront {
  /** Every public path of the stack, plus the hosted form's backend under /checkout. */
  url: string;
  stop(): Promise<void>;
}

/**
 * The stack of test/stack.ts has no hosted form backend (the merchant API does not need it), but a
 * shopper's cancel button does. This starts it on the stack's environment and puts one more local
 * edge (deploy/local/edge.mjs) in front: /checkout to it, the rest to the stack's own edge.
 */
export async function startHostedFormFront(stack: Stack): Promise<HostedFormFront> {
  const bffPort = await freePort();
  const bff: ServiceProcess = await startServiceProcess(
    path.join(ROOT, 'apps/hosted-form-bff/dist/main.js'),
    await stack.env.serviceEnv('hosted-form-bff', { HTTP_PORT: String(bffPort), PUBLIC_BASE_URL: stack.url }),
    60_000,
  );
  const dir = mkdtempSync(path.join(tmpdir(), 'byrd-trigger-edge-'));
  const routesFile = path.join(dir, 'routes.json');
  writeFileSync(
    routesFile,
    JSON.stringify({
      services: { stack: { port: Number(new URL(stack.url).port) }, 'hosted-form-bff': { port: bffPort } },
      routes: [
        { prefix: '/api', service: 'stack' },
        { prefix: '/3ds', service: 'stack' },
        { prefix: '/checkout', service: 'hosted-form-bff' },
      ],
    }),
  );
  const edgePort = await freePort();
  const edge = spawn(process.execPath, [path.join(ROOT, 'deploy/local/edge.mjs')], {
    env: {
      PATH: process.env.PATH,
      ROUTES_FILE: routesFile,
      EDGE_PORT: String(edgePort),
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => edge.once('exit', () => resolve()));
  const stop = async () => {
    edge.kill('SIGTERM');
    bff.child.kill('SIGKILL');
    await Promise.all([exited, bff.exited()]);
    rmSync(dir, { recursive: true, force: true });
  };
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the edge did not start: ${output}`)), 15_000);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('edge listening on')) {
          clearTimeout(timer);
          resolve();
        }
      };
      edge.stdout.on('data', read);
      edge.stderr.on('data', read);
      void exited.then(() => reject(new Error(`the edge exited: ${output}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `http://127.0.0.1:${edgePort}`, stop };
}
