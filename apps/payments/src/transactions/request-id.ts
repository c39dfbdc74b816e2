import { randomUUID } from 'node:crypto';
import { isGuid } from '@byrd/contracts';
import type { AuthenticatedRequest } from '@byrd/platform';

/**
 * The `requestId` a payment carries is a GUID (SPEC.md); the caller's `x-request-id` is reused when
 * it is one, so logs and answers line up, else a GUID of our own stands in.
 */
export function requestGuidOf(request: AuthenticatedRequest): string {
  const id = String(request.id);
  return isGuid(id) ? id.toLowerCase() : randomUUID();
}
