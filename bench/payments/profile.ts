// --profile: the payments service's .cpuprofile (node --cpu-prof), summarised over the measured
// service windows by layer of the request path, package and function.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, note } from '../core/util.js';
import { byLayer, summariseProfile, type Layers, type ProfileSummary, type Share } from './cpu-profile.js';

/** Layers of the payments request path. */
const LAYERS: Layers = [
  ['socket writes (+ waiting for a core after waking a peer)', (p) => p === '(socket writes)'],
  [
    'TypeORM + pg (building and running SQL)',
    (p) => ['typeorm', 'pg', 'pg-protocol', 'pg-pool', 'pg-types', 'postgres-array'].includes(p),
  ],
  [
    'validation (class-validator, class-transformer, validator)',
    (p) => ['class-validator', 'class-transformer', 'validator', 'libphonenumber-js'].includes(p),
  ],
  [
    'NestJS + rxjs (guards, interceptors, pipes)',
    (p) => p.startsWith('@nestjs/') || p === 'rxjs' || p === 'reflect-metadata',
  ],
  [
    'Fastify + pino (HTTP, per-request logger)',
    (p) =>
      /^(fastify|@fastify\/|find-my-way|light-my-request|avvio|pino|nestjs-pino|pino-http|fast-json-stringify|safe-stable-stringify|secure-json-parse|fast-redact|@pinojs\/)/.test(
        p,
      ),
  ],
  ['NATS (outbox relay, KV watch)', (p) => p.startsWith('@nats-io/')],
  [
    'card checks (card-validator, credit-card-type)',
    (p) => ['card-validator', 'credit-card-type'].includes(p),
  ],
  ['platform + payments + contracts code', (p) => p.startsWith('@byrd/') || p.startsWith('apps/')],
  ['node core (http, net, crypto, streams)', (p) => p === 'node core'],
  ['garbage collector', (p) => p === '(garbage collector)'],
  ['native / program', (p) => p === '(native, program)'],
];

export type PaymentsProfile = ProfileSummary & { file: string; byLayer: Share[] };

/** The profile written in `dir` when payments stopped, summarised over `windows`; null when none. */
export function paymentsProfile(
  dir: string,
  windows: { startUs: number; endUs: number }[],
): PaymentsProfile | null {
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) {
    note(`no .cpuprofile was written in ${dir}`);
    return null;
  }
  const summary = summariseProfile(join(dir, file), windows);
  return { file: relative(ROOT, join(dir, file)), ...summary, byLayer: byLayer(summary, LAYERS) };
}
