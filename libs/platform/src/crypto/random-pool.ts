import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/**
 * Cryptographically random bytes (the same CSPRNG as `randomBytes`), drawn from a pool refilled
 * 4 KiB at a time: `randomBytes` makes a job and a system call per value, which showed up on the
 * payment and token paths (IVs, data keys, sandbox cryptograms). Each byte is handed out once and
 * wiped from the pool as it leaves, so a key does not linger there.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_BYTES) return randomFillSync(Buffer.alloc(size));
  if (offset + size > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = Buffer.from(pool.subarray(offset, offset + size));
  pool.fill(0, offset, offset + size);
  offset += size;
  return bytes;
}
