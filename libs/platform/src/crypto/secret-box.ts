import { createHash } from 'node:crypto';
import { aesGcmOpen, aesGcmSeal } from './aes-gcm.js';

const VERSION = 'v1';

/** The id of a key as stored next to what it sealed: not secret, lets keys rotate. */
function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/**
 * AES-256-GCM for small secrets kept in a database (credentials, signing secrets), so a dump of the
 * database alone reveals none of them. A sealed value is `v1:<key id>:<base64 of iv, tag, ciphertext>`
 * and is bound to a context (e.g. the row id and column) by the additional data, so it cannot be
 * moved to another row or column. The first key seals; every key opens, which lets a new key be
 * introduced before the old one is retired.
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  private readonly sealingKeyId: string;
  private readonly sealingKey: Buffer;

  constructor(keys: Buffer[]) {
    if (keys.length === 0) throw new Error('SecretBox needs at least one key');
    for (const key of keys) {
      if (key.length !== 32) throw new Error('SecretBox keys are 32 bytes (AES-256)');
      this.keys.set(keyId(key), key);
    }
    this.sealingKeyId = keyId(keys[0]);
    this.sealingKey = keys[0];
  }

  /** Keys from a comma-separated list of base64 keys (the first seals). Throws on a bad entry. */
  static fromBase64List(list: string): SecretBox {
    return new SecretBox(parseKeyList(list));
  }

  seal(plain: string, context: string): string {
    const sealed = aesGcmSeal(this.sealingKey, Buffer.from(plain, 'utf8'), context);
    return `${VERSION}:${this.sealingKeyId}:${sealed.toString('base64')}`;
  }

  open(sealed: string, context: string): string {
    const [version, id, data] = sealed.split(':');
    const key = this.keys.get(id);
    if (version !== VERSION || !key || !data) {
      throw new Error(`Cannot open a secret sealed with key ${id ?? '?'}: that key is not configured`);
    }
    return aesGcmOpen(key, Buffer.from(data, 'base64'), context).toString('utf8');
  }

  /** Whether the value was sealed with an older key (to re-seal it with the current one). */
  needsResealing(sealed: string): boolean {
    return sealed.split(':')[1] !== this.sealingKeyId;
  }
}

/** Parses a comma-separated list of base64 32-byte keys; the message names what is wrong. */
export function parseKeyList(list: string): Buffer[] {
  const entries = list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error('must list at least one base64 32-byte key');
  return entries.map((entry, index) => {
    const key = Buffer.from(entry, 'base64');
    if (key.length !== 32) throw new Error(`key ${index + 1} is not 32 bytes of base64`);
    return key;
  });
}
