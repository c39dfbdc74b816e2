/** Lowercase hyphenated GUID: the form of every id of the API. */
export const GUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for a GUID in the canonical lowercase hyphenated form. */
export function isGuid(value: unknown): value is string {
  return typeof value === 'string' && GUID_PATTERN.test(value);
}

/**
 * The GUID a value names, read as the API reads an id (trimmed, any case: a client may have stored
 * it in capitals), in its canonical form; null when it names none.
 */
export function guidOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const id = value.trim().toLowerCase();
  return isGuid(id) ? id : null;
}
