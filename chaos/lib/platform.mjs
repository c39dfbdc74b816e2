// The few pieces of @byrd/platform a benchmark needs, imported from its build output file by file
// (so the harness process does not load NestJS, TypeORM and the rest of the platform's index), and
// only when first used (so `npm run bench` can build dist/ before anything needs it).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TARGET_ROOT } from './util.mjs';

const FILES = ['auth/merchants.js', 'messaging/nats.js', 'messaging/streams.js'];

/** The platform dist files a benchmark imports (of the code under test). */
export const platformFiles = () => FILES.map((file) => join(TARGET_ROOT, 'libs/platform/dist', file));

let loaded;

/** { MerchantDirectory, NatsContext, ensureEventsStream } from libs/platform/dist. */
export function loadPlatform() {
  loaded ??= Promise.all(platformFiles().map((file) => import(pathToFileURL(file).href))).then(
    ([{ MerchantDirectory }, { NatsContext }, { ensureEventsStream }]) => ({
      MerchantDirectory,
      NatsContext,
      ensureEventsStream,
    }),
  );
  return loaded;
}
