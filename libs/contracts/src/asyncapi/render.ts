// The text of docs/asyncapi.yaml: the generated document as YAML under a "do not edit" banner.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { stringify } from 'yaml';
import { buildAsyncApiDocument } from './asyncapi-document.js';

/** Where the document is committed. */
export const ASYNCAPI_PATH = fileURLToPath(new URL('../../../../docs/asyncapi.yaml', import.meta.url));

const PACKAGE_JSON = fileURLToPath(new URL('../../package.json', import.meta.url));

const BANNER =
  '# Generated from libs/contracts by `npm run asyncapi -w @byrd/contracts`; do not edit by hand.\n';

/** The document's text, the same on every run for the same contracts. */
export async function renderAsyncApi(): Promise<string> {
  const { version } = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string };
  // YAML 1.1 quoting keeps timestamps and yes/no strings strings for every reader; no anchors/aliases.
  const yaml = stringify(buildAsyncApiDocument(version), {
    aliasDuplicateObjects: false,
    schema: 'yaml-1.1',
  });
  // Formatted as the repository's Prettier would, so `npm run format` leaves the committed file alone.
  const options = await prettier.resolveConfig(ASYNCAPI_PATH);
  return prettier.format(BANNER + yaml, { ...options, filepath: ASYNCAPI_PATH });
}
