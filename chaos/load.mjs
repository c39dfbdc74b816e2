// The merchant's steady load: `rate` flows started per second at an even pace (a flow that cannot
// start because too many are still in flight is counted as skipped, never queued up).
import { pickFlow } from './flows.mjs';

const MAX_IN_FLIGHT = 400;

export function startLoad(client, rate) {
  const flows = [];
  const inFlight = new Set();
  let skipped = 0;
  const timer = setInterval(() => {
    if (inFlight.size >= MAX_IN_FLIGHT) {
      skipped++;
      return;
    }
    const [name, flow] = pickFlow();
    const record = { name, startedAt: Date.now() };
    const running = flow
      .run(client)
      .then(
        (outcome) => Object.assign(record, { ok: true, ...outcome }),
        (error) =>
          Object.assign(record, {
            ok: false,
            error: error.message,
            ...(error.transactionId ? { transactionId: error.transactionId } : {}),
          }),
      )
      .finally(() => {
        record.endedAt = Date.now();
        inFlight.delete(running);
      });
    inFlight.add(running);
    flows.push(record);
  }, 1000 / rate);
  return {
    /** Starts no more flows (the run is being torn down). */
    halt() {
      clearInterval(timer);
    },
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      flows.skipped = skipped;
      return flows;
    },
  };
}
