import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig } from '@byrd/platform';
import { paymentsConfigSchema } from '../config.js';
import { CardSeal } from './card-seal.js';

const ENV = { DATABASE_URL: 'postgres://127.0.0.1/payments', NATS_URL: 'nats://127.0.0.1:4222' };
const newKey = () => randomBytes(32).toString('base64');
const card = { number: '4242424242424242', expiration: '12/30' };

/**
 * CARD_SEAL_KEY rotated with no 3DS challenge lost (docs/operations.md, "Card seal key"): replicas
 * given `new,old` open what `old` sealed and seal under `new`, which replicas given `old,new` (the
 * rollout's first step) open too.
 */
describe('CardSeal', () => {
  it('seals under the first key and opens under any key of the list, through a rotation', () => {
    const [previous, next] = [newKey(), newKey()];
    const session = randomUUID();
    const before = new CardSeal(previous);
    const adding = new CardSeal(`${previous},${next}`);
    const switched = new CardSeal(`${next}, ${previous}`);
    const after = new CardSeal(next);

    const sealedBefore = before.seal(card, session);
    expect(adding.open(sealedBefore, session)).toEqual(card);
    expect(switched.open(sealedBefore, session)).toEqual(card);
    const sealedSwitched = switched.seal(card, session);
    expect(adding.open(sealedSwitched, session)).toEqual(card);
    expect(after.open(sealedSwitched, session)).toEqual(card);
    // A card sealed under a key dropped from the list cannot be opened (nor in another session).
    expect(after.openOrNull(sealedBefore, session)).toBeNull();
    expect(switched.openOrNull(sealedSwitched, randomUUID())).toBeNull();
  });

  it('takes a list in CARD_SEAL_KEY and refuses an entry that is not a 32-byte key', () => {
    const list = `${newKey()},${newKey()}`;
    expect(loadConfig(paymentsConfigSchema, { ...ENV, CARD_SEAL_KEY: list }).CARD_SEAL_KEY).toBe(list);
    expect(() => loadConfig(paymentsConfigSchema, { ...ENV, CARD_SEAL_KEY: `${newKey()},short` })).toThrow(
      /CARD_SEAL_KEY/,
    );
  });
});
