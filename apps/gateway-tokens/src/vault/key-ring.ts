import { randomBytes } from 'node:crypto';

/** A key-encryption key: wraps the per-record data keys, never touches card data itself. */
export interface Kek {
  id: string;
  key: Buffer;
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * The vault's KEKs from VAULT_KEKS (`id:base64,id:base64`, 32-byte keys) and the one that wraps new
 * data keys (VAULT_ACTIVE_KEK, else the first listed). Every listed key unwraps, so a new key is
 * rolled out to every replica before it becomes active, and an old one leaves only after
 * `vault rotate-kek` has re-wrapped what it protected.
 */
export class KeyRing {
  private readonly keys: Map<string, Buffer>;
  readonly active: Kek;

  constructor(keks: Kek[], activeId?: string) {
    if (keks.length === 0) throw new Error('at least one key-encryption key is needed');
    this.keys = new Map(keks.map((k) => [k.id, k.key]));
    const id = activeId ?? keks[0].id;
    const key = this.keys.get(id);
    // Named only if it looks like an id: a key pasted into VAULT_ACTIVE_KEK is not echoed.
    if (!key)
      throw new Error(`the active key ${KEY_ID.test(id) ? `"${id}" ` : ''}is not among the listed keys`);
    this.active = { id, key };
  }

  static fromConfig(config: { VAULT_KEKS: string; VAULT_ACTIVE_KEK?: string }): KeyRing {
    return new KeyRing(parseKeks(config.VAULT_KEKS), config.VAULT_ACTIVE_KEK);
  }

  get(id: string): Buffer {
    const key = this.keys.get(id);
    if (!key) throw new Error(`key-encryption key "${id}" is not configured (VAULT_KEKS)`);
    return key;
  }

  get ids(): string[] {
    return [...this.keys.keys()];
  }
}

/**
 * Parses VAULT_KEKS; the message names the bad entry by its position (and its id once that is a
 * valid id), never by its text: a key pasted without its `id:` would otherwise end up in the log of
 * every restart.
 */
export function parseKeks(list: string): Kek[] {
  const entries = list
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error('must list at least one id:base64-key');
  const seen = new Set<string>();
  return entries.map((entry, index) => {
    const colon = entry.indexOf(':');
    const id = entry.slice(0, Math.max(colon, 0));
    const encoded = entry.slice(colon + 1);
    if (colon < 0 || !KEY_ID.test(id) || !encoded) {
      throw new Error(
        `entry ${index + 1} is not id:base64-key (an id of letters, digits, - and _, a colon, the key)`,
      );
    }
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== 32) throw new Error(`key "${id}" is not 32 bytes of base64`);
    if (seen.has(id)) throw new Error(`key id "${id}" is listed twice`);
    seen.add(id);
    return { id, key };
  });
}

/** A new KEK entry for VAULT_KEKS. */
export function newKekEntry(id: string): string {
  // Refused here, not by the replicas the entry would then keep from starting.
  if (!KEY_ID.test(id)) throw new Error(`"${id}" is not a KEK id: 1 to 32 letters, digits, - and _`);
  return `${id}:${randomBytes(32).toString('base64')}`;
}
