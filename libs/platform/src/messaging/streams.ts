import { RetentionPolicy, StorageType, DiscardPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { EVENT_FAMILIES } from '@byrd/contracts';

const NANOS_PER_MS = 1_000_000;
/** Long enough to de-duplicate an outbox row re-published after a relay crash. */
export const DUPLICATE_WINDOW_MS = 15 * 60_000;

export function eventSubjects(prefix: string): string[] {
  return EVENT_FAMILIES.map((family) => `${prefix}${family}.>`);
}

/**
 * Creates the EVENTS stream, or brings an existing one to the expected subjects, retention,
 * de-duplication window and number of copies (`replicas`: EVENTS_STREAM_REPLICAS; on a NATS cluster,
 * 3 keeps an acknowledged event on three servers, where one copy may lose the events it acknowledged
 * since its last flush to disk if that server's machine fails). Idempotent: every service calls it at
 * boot, and the Helm provisioning Job calls it before any service starts.
 */
export async function ensureEventsStream(
  jsm: JetStreamManager,
  name: string,
  prefix: string,
  replicas = 1,
): Promise<void> {
  const config = {
    name,
    subjects: eventSubjects(prefix),
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: 30 * 24 * 3_600_000 * NANOS_PER_MS,
    duplicate_window: DUPLICATE_WINDOW_MS * NANOS_PER_MS,
    num_replicas: replicas,
  };
  try {
    const info = await jsm.streams.info(name);
    const current = new Set(info.config.subjects ?? []);
    const settled =
      config.subjects.every((s) => current.has(s)) &&
      info.config.max_age === config.max_age &&
      info.config.duplicate_window === config.duplicate_window &&
      info.config.num_replicas >= config.num_replicas;
    if (settled) return;
    await jsm.streams.update(name, {
      ...info.config,
      subjects: [...new Set([...current, ...config.subjects])],
      max_age: config.max_age,
      duplicate_window: config.duplicate_window,
      // Raised, never lowered: a process run with the default of 1 must not take copies away.
      num_replicas: Math.max(info.config.num_replicas, config.num_replicas),
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
