import { ALL_EVENT_NAMES } from '@byrd/contracts';
import { FLOWS } from './flows.js';
import { closestEvents, runTrigger, TRIGGERABLE_EVENTS } from './trigger.js';

// Nothing listens here: every case below must answer before any network call.
const NOWHERE = { apiKey: '00000000-0000-4000-8000-000000000000', baseUrl: 'http://127.0.0.1:9' };

async function trigger(event: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runTrigger(event, NOWHERE, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: {},
  });
  return { code, out, err: err.join('\n') };
}

describe('trigger: its catalogue', () => {
  it('knows every event of the catalogue, in catalogue order', () => {
    expect(TRIGGERABLE_EVENTS).toEqual(ALL_EVENT_NAMES);
  });

  it('explains, instead of faking, exactly the two events no public sandbox call can cause', () => {
    const untriggerable = Object.entries(FLOWS)
      .filter(([, flow]) => 'untriggerable' in flow)
      .map(([event]) => event);
    expect(untriggerable).toEqual(['transaction.capture.canceled', 'transaction.refund.canceled']);
  });

  it.each([
    ['order.payed', ['order.paid']],
    ['paid', ['order.paid', 'order.partialpaid']],
    ['chargeback.win', ['chargeback.won']],
    ['transaction.payment.succes', ['transaction.payment.success']],
  ])('suggests for %j the closest names %j', (typed, expected) => {
    expect(closestEvents(typed).slice(0, expected.length)).toEqual(expected);
  });

  it('answers an unknown name with exit 1, the closest names and --list', async () => {
    const { code, out, err } = await trigger('order.payed');
    expect(code).toBe(1);
    expect(out).toEqual([]);
    expect(err).toBe(
      '"order.payed" is not an event of the catalogue. Did you mean order.paid? See every event with: trigger --list',
    );
  });

  it('answers an event the sandbox cannot cause with exit 1 and the reason', async () => {
    const { code, err } = await trigger('transaction.refund.canceled');
    expect(code).toBe(1);
    expect(err).toMatch(
      /^transaction\.refund\.canceled cannot be produced in the sandbox: nothing in the public API cancels/,
    );
  });
});
