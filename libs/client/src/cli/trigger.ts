import { ByrdClient } from '../client.js';
import { ByrdApiError } from '../errors.js';
import { DeliveryWatch, type WatchedDelivery } from './delivery-watch.js';
import { DEFAULT_WAIT_MS, FLOWS, type EventSubject, type Flow, type Untriggerable } from './flows.js';
import type { CliIo } from './main.js';

/** Every event name of the catalogue, in catalogue order (those the sandbox cannot cause say why). */
export const TRIGGERABLE_EVENTS: readonly string[] = Object.freeze(Object.keys(FLOWS));

export interface TriggerOptions {
  apiKey: string;
  baseUrl: string;
  /** Overrides every flow's wait for its delivery (tests). */
  waitMs?: number;
}

/**
 * `byrd trigger <event>`: runs the flow that makes the platform emit `event` for real (through the
 * public sandbox API, as a merchant and shopper would), and confirms it by seeing the event's webhook
 * arrive on a listen stream opened beforehand. Returns the exit code.
 */
export async function runTrigger(event: string, options: TriggerOptions, io: CliIo): Promise<number> {
  const flow = (FLOWS as Record<string, Flow | Untriggerable>)[event];
  if (!flow) {
    const near = closestEvents(event);
    const hint = near.length ? `Did you mean ${near.join(', ')}? ` : '';
    io.err(`"${event}" is not an event of the catalogue. ${hint}See every event with: trigger --list`);
    return 1;
  }
  if ('untriggerable' in flow) {
    io.err(`${event} cannot be produced in the sandbox: ${flow.untriggerable}.`);
    return 1;
  }

  let watch: DeliveryWatch;
  try {
    // Opened before the flow runs: the stream only carries what happens after it is ready.
    watch = await DeliveryWatch.open({ apiKey: options.apiKey, baseUrl: options.baseUrl, events: [event] });
  } catch (error) {
    if (error instanceof ByrdApiError && error.status === 403) {
      io.err(`trigger works in the sandbox only, with a sandbox API key: ${error.message}`);
      return 1;
    }
    throw error;
  }
  try {
    io.out(`${event}: ${flow.does}`);
    const byrd = new ByrdClient({ apiKey: options.apiKey, baseUrl: options.baseUrl });
    let result;
    try {
      result = await flow.run({ byrd, apiKey: options.apiKey, baseUrl: options.baseUrl });
    } catch (error) {
      const why = error instanceof ByrdApiError ? error.toString() : (error as Error).message;
      io.err(`Could not produce ${event}: ${flow.does} failed: ${why}`);
      return 1;
    }
    for (const step of result.steps) io.out(`  ${step}`);
    const waitMs = options.waitMs ?? flow.waitMs ?? DEFAULT_WAIT_MS;
    const delivery = await watch.waitFor((d) => d.event === event && isAbout(d, result.about), waitMs);
    if (!delivery) {
      const why = watch.endedBecause ? ` (the listen stream ended: ${watch.endedBecause})` : '';
      io.err(
        `The flow ran but no ${event} about ${describe(result.about)} arrived within ${waitMs / 1000} s${why}.`,
      );
      return 1;
    }
    io.out(`${event} delivered as webhook ${delivery.id} (${describe(result.about)})`);
    return 0;
  } finally {
    watch.close();
  }
}

function isAbout(delivery: WatchedDelivery, about: EventSubject): boolean {
  const content = delivery.webhook.content ?? {};
  return Object.entries(about).every(([key, id]) => id === undefined || content[key] === id);
}

function describe(about: EventSubject): string {
  return Object.entries(about)
    .filter(([, id]) => id !== undefined)
    .map(([key, id]) => `${key} ${id}`)
    .join(', ');
}

/** Event names that contain what was typed, else the nearest by edit distance (at most three). */
export function closestEvents(typed: string): string[] {
  const wanted = typed.trim().toLowerCase();
  if (!wanted) return [];
  const containing = TRIGGERABLE_EVENTS.filter((name) => name.includes(wanted));
  if (containing.length) return containing.slice(0, 3);
  return TRIGGERABLE_EVENTS.map((name) => ({ name, distance: editDistance(wanted, name) }))
    .filter(({ distance }) => distance <= Math.max(3, Math.floor(wanted.length / 3)))
    .sort((a, b) => a.distance - b.distance)
    .slice(0, 3)
    .map(({ name }) => name);
}

/** Levenshtein distance (one row at a time). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}
