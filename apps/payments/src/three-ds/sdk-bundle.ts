import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Injectable } from '@nestjs/common';

/**
 * Our browser SDK (sdk/byrd-three-ds.js, copied beside the compiled code by the build), read once at
 * boot: a missing bundle stops the service instead of failing shoppers later.
 */
@Injectable()
export class SdkBundle {
  readonly source: Buffer;
  readonly etag: string;

  constructor() {
    this.source = readFileSync(new URL('./sdk/byrd-three-ds.js', import.meta.url));
    this.etag = `"${createHash('sha256').update(this.source).digest('base64url').slice(0, 27)}"`;
  }

  /** Whether the browser's copy (If-None-Match) is this one. */
  isCurrent(ifNoneMatch: string | undefined): boolean {
    return ifNoneMatch?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === this.etag) ?? false;
  }
}
