import { createCipheriv, createDecipheriv } from 'node:crypto';
import { pooledRandomBytes } from './random-pool.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM with a random 96-bit IV, bound to `context` by the additional data. The result is
 * `iv ‖ tag ‖ ciphertext`; opening it with another key or context throws.
 */
export function aesGcmSeal(key: Buffer, plain: Buffer, context: string): Buffer {
  const iv = pooledRandomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

export function aesGcmOpen(key: Buffer, sealed: Buffer, context: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}
