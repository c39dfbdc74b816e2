// The webhooks benchmark's options (npm run bench -- webhooks --help lists them), and their values.
import { PHASE_OPTIONS, flag, list, text, type Args, type Options } from '../core/scenario.js';
import { atLeastZero, fail, positiveNumber, serviceEnvOf } from '../core/util.js';

export const WEBHOOKS_OPTIONS: Options = {
  events: { type: 'string', default: '20000', help: 'events published in the throughput phase' },
  rate: { type: 'string', default: '500', help: 'events/s of the paced latency phase' },
  duration: { type: 'string', default: '10', help: 'seconds of the paced latency phase' },
  concurrency: {
    type: 'string',
    help: 'WEBHOOK_CONCURRENCY of the service (default: the service default, 128)',
  },
  'future-rows': {
    type: 'string',
    default: '1000000',
    help: 'pending webhooks due in the future for the large claim measurement (the small one: 10000)',
  },
  'due-rows': { type: 'string', default: '100', help: 'webhooks due now, claimed by every claim run' },
  'claim-runs': { type: 'string', default: '300', help: 'measured claim statements per table size' },
  receiver: {
    type: 'string',
    default: 'process',
    help: 'where the receiver runs: "process" (its own) or "inline" (this harness)',
  },
  'no-claim': { type: 'boolean', default: false, help: 'skip the claim query phase' },
  'no-delivery-only': {
    type: 'boolean',
    default: false,
    help: 'skip the phase that inserts due rows directly (delivery stage alone, fan-out bypassed)',
  },
  noisy: {
    type: 'string',
    default: '500',
    help: 'the noisy neighbour\'s receiver: "500" (answers 500 at once) or "hang" (until WEBHOOK_TIMEOUT_MS)',
  },
  'noisy-rows': {
    type: 'string',
    default: '100000',
    help: "webhooks due now at the noisy neighbour's endpoint",
  },
  'no-noisy': { type: 'boolean', default: false, help: 'skip the noisy-neighbour phase' },
  ...PHASE_OPTIONS,
  'service-env': {
    type: 'string',
    multiple: true,
    help: 'extra environment of the webhook service, KEY=VALUE (repeatable), e.g. WEBHOOK_CLAIM_BATCH=200',
  },
};

const whole = (name: string, args: Args) => Math.round(positiveNumber(name, text(args, name)));

export function settingsOf(args: Args) {
  const settings = {
    events: whole('events', args),
    rate: positiveNumber('rate', text(args, 'rate')),
    durationS: positiveNumber('duration', text(args, 'duration')),
    concurrency: text(args, 'concurrency') ? String(whole('concurrency', args)) : null,
    futureRows: whole('future-rows', args),
    dueRows: whole('due-rows', args),
    claimRuns: whole('claim-runs', args),
    receiver: text(args, 'receiver'),
    claim: !flag(args, 'no-claim'),
    deliveryOnly: !flag(args, 'no-delivery-only'),
    noisy: flag(args, 'no-noisy') ? null : text(args, 'noisy'),
    noisyRows: whole('noisy-rows', args),
    quietWaitS: atLeastZero(text(args, 'quiet-wait')),
    serviceEnv: serviceEnvOf(list(args, 'service-env')),
  };
  if (!['process', 'inline'].includes(settings.receiver))
    fail(`--receiver is "process" or "inline", got "${settings.receiver}".`);
  if (settings.noisy !== null && !['500', 'hang'].includes(settings.noisy))
    fail(`--noisy is "500" or "hang", got "${settings.noisy}".`);
  return settings;
}

export type WebhooksSettings = ReturnType<typeof settingsOf>;

/** What was measured, in words (printed above the tables and kept in the JSON file). */
export const describeRun = (s: WebhooksSettings) => ({
  event:
    'transaction.payment.success of one sandbox merchant, one setting (api-key credential, signed): one webhook per event',
  service: `apps/webhook-service/dist/main.js, LOG_LEVEL=warn, NODE_ENV=production, WEBHOOK_ALLOW_PRIVATE_NETWORKS=true, WEBHOOK_CONCURRENCY=${s.concurrency ?? '128 (default)'}`,
  receiver:
    s.receiver === 'inline'
      ? 'node:http in the harness process, 200 with an empty body'
      : 'bench/webhooks/receiver.ts, its own process, node:http, 200 with an empty body',
  latency:
    'from the publish call (throughput) or the scheduled publish time (paced) to the arrival of the request',
});
