import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ALL_EVENT_NAMES } from '@byrd/contracts';
import type { EventCollector } from '@byrd/platform/testing';
import { runCli, type CliIo } from '../src/cli/main.js';
import { runTrigger, TRIGGERABLE_EVENTS } from '../src/cli/trigger.js';
import { startStack, type Stack } from './stack.js';

/** Events no public sandbox call can cause (see FLOWS in src/cli/flows.ts). */
const UNTRIGGERABLE = ['transaction.capture.canceled', 'transaction.refund.canceled'];

function capturingIo(): CliIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (line) => lines.push(line), err: (line) => errors.push(line), env: {} };
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function inPool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}

describe('byrd trigger against the running platform', () => {
  let stack: Stack;
  let events: EventCollector;

  beforeAll(async () => {
    stack = await startStack();
    // The platform's own event stream: the independent witness of what trigger claims it caused.
    events = await stack.env.collect();
  }, 150_000);

  afterAll(async () => {
    await stack?.stop();
  });

  const trigger = async (event: string, apiKey = stack.merchant.apiKey) => {
    const io = capturingIo();
    const code = await runTrigger(event, { apiKey, baseUrl: stack.url }, io);
    return { code, io };
  };

  it('produces every triggerable event of the catalogue for real, each seen on the platform event stream', async () => {
    const triggerable = ALL_EVENT_NAMES.filter((name) => !UNTRIGGERABLE.includes(name));
    expect(triggerable).toHaveLength(33);
    // order.expired waits for the expiry sweep: started first, it overlaps the others.
    const ordered = ['order.expired', ...triggerable.filter((name) => name !== 'order.expired')];
    const outcomes = await inPool(ordered, 8, async (event) => ({ event, ...(await trigger(event)) }));

    for (const { event, code, io } of outcomes) {
      expect({ event, code, errors: io.errors }).toEqual({ event, code: 0, errors: [] });
      const confirmed = io.lines.at(-1) ?? '';
      const match = new RegExp(
        `^${event.replace(/\./g, '\\.')} delivered as webhook [0-9a-f-]{36} \\((\\w+) ([0-9a-f-]{36})\\)$`,
      ).exec(confirmed);
      expect({ event, confirmed, matched: Boolean(match) }).toEqual({ event, confirmed, matched: true });
      const [, key, id] = match!;
      // The event exists on the platform's stream, about the resource trigger reported.
      const seen = await events
        .waitFor(
          (envelope) =>
            envelope.type === event && (envelope.data as unknown as Record<string, unknown>)[key] === id,
          5_000,
        )
        .catch((error: Error) => {
          throw new Error(
            `trigger ${event} reported ${key} ${id}, which the platform never announced: ${error.message}`,
          );
        });
      expect(seen.envelope.merchantId).toBe(stack.merchant.merchantId);
    }
  }, 120_000);

  it('says which events the sandbox cannot cause and why, and produces nothing for them', async () => {
    for (const event of UNTRIGGERABLE) {
      const { code, io } = await trigger(event);
      expect(code).toBe(1);
      expect(io.errors.join('\n')).toContain(`${event} cannot be produced in the sandbox`);
      expect(events.ofType(event)).toEqual([]);
    }
  });

  it('refuses an unknown event name and suggests the closest ones', async () => {
    const { code, io } = await trigger('order.payed');
    expect(code).toBe(1);
    expect(io.errors.join('\n')).toMatch(
      /"order\.payed" is not an event of the catalogue\. Did you mean order\.paid/,
    );
    expect(io.errors.join('\n')).toContain('trigger --list');
  });

  it('lists the 35 events of the catalogue with trigger --list', async () => {
    const io = capturingIo();
    expect(await runCli(['trigger', '--list'], io)).toBe(0);
    expect(io.lines).toEqual([...ALL_EVENT_NAMES]);
    expect(TRIGGERABLE_EVENTS).toEqual(ALL_EVENT_NAMES);
  });

  it('refuses a live key: sandbox only, and runs no flow', async () => {
    const live = await stack.env.createMerchant('Live Shop', 'live');
    const before = events.events.length;
    const { code, io } = await trigger('order.created', live.apiKey);
    expect(code).toBe(1);
    expect(io.errors.join('\n')).toMatch(/sandbox only/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(events.events.slice(before).filter((e) => e.envelope.merchantId === live.merchantId)).toEqual([]);
  });
});
