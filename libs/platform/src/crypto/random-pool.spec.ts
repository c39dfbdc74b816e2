import { pooledRandomBytes } from './random-pool.js';

describe('pooledRandomBytes', () => {
  it('hands out fresh bytes of the asked size, never the same twice, across refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const bytes = pooledRandomBytes(i % 3 === 0 ? 32 : 12);
      expect(bytes.length).toBe(i % 3 === 0 ? 32 : 12);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(2_000);
  });

  it('gives the caller its own copy: wiping it leaves later values intact', () => {
    const key = pooledRandomBytes(32);
    const next = pooledRandomBytes(32);
    const before = next.toString('hex');
    key.fill(0);
    expect(next.toString('hex')).toBe(before);
    expect(before).not.toBe('00'.repeat(32));
  });

  it('serves sizes above the pool directly', () => {
    expect(pooledRandomBytes(10_000).length).toBe(10_000);
  });
});
