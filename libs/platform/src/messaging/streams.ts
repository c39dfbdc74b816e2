import { RetentionPolicy, StorageType, DiscardPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { EVENT_FAMILIES } from '@byrd/contracts';

const NANOS_PER_MS = 1_000_000;
/** Long enough to de-duplicate an outbox row re-published after a relay crash. */
export const DUPLICATE_WINDOW_MS = 15 * 60_000;

export function eventSubjects(prefix: string): string[] {
  return EVENT_FAMILIES.map((family) => `${prefix}${family}.>`);
}

/**
 * Creates the EVENTS stream, or brings an existing one to the expected subjects. Idempotent: every
 * service calls it at boot, and the Helm provisioning Job calls it before any service starts.
 */
export async function ensureEventsStream(jsm: JetStreamManager, name: string, prefix: string): Promise<void> {
  const config = {
    name,
    subjects: eventSubjects(prefix),
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: 30 * 24 * 3_600_000 * NANOS_PER_MS,
    duplicate_window: DUPLICATE_WINDOW_MS * NANOS_PER_MS,
  };
  try {
    const info = await jsm.streams.info(name);
    const current = new Set(info.config.subjects ?? []);
    if (config.subjects.every((s) => current.has(s))) return;
    await jsm.streams.update(name, {
      ...info.config,
      subjects: [...new Set([...current, ...config.subjects])],
    });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await jsm.streams.add(config);
  }
}

export function isNotFound(error: unknown): boolean {
  const e = error as { code?: unknown; message?: string; api_error?: { code?: number } };
  return e?.api_error?.code === 404 || /not found/i.test(e?.message ?? '');
}
