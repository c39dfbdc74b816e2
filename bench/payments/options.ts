// The payments benchmark's options (npm run bench -- payments --help lists them).
import { PHASE_OPTIONS, type Options } from '../core/scenario.js';

export const PAYMENTS_OPTIONS: Options = {
  duration: { type: 'string', default: '10', help: 'measured seconds per phase' },
  warmup: { type: 'string', default: '3', help: 'warm-up seconds before each measured window' },
  connections: { type: 'string', default: '50', help: 'concurrent connections' },
  'no-direct': { type: 'boolean', default: false, help: 'skip the direct (no edge) phases' },
  'paced-share': {
    type: 'string',
    default: '0.6',
    help: "the paced phases' rate as a share of the bare handler's req/s (the p99 goal is judged at 0.6 only)",
  },
  'bare-3ds-row': {
    type: 'boolean',
    default: false,
    help: 'bare handler also inserts the three_ds_sessions row the service writes',
  },
  prefill: {
    type: 'string',
    default: '0',
    help: 'rows of history (settled payments and their 3DS sessions) in both databases first, e.g. 1000000',
  },
  'idempotency-key': {
    type: 'boolean',
    default: false,
    help: 'send a unique idempotency-key with every request (the bare handler ignores it)',
  },
  'no-orders': {
    type: 'boolean',
    default: false,
    help: 'do not run orders (nobody consumes transaction.* events): payments alone',
  },
  'pool-size': {
    type: 'string',
    help: 'DATABASE_POOL_SIZE of payments and the bare handler (default: the service default, 10)',
  },
  profile: {
    type: 'boolean',
    default: false,
    help: 'CPU-profile payments (node --cpu-prof) and print where its time goes',
  },
  ...PHASE_OPTIONS,
  'service-env': {
    type: 'string',
    multiple: true,
    help: 'extra environment of payments, KEY=VALUE (repeatable), e.g. OUTBOX_POLL_MS=20 to compare settings',
  },
};
