// `npm run asyncapi -w @byrd/contracts`: writes docs/asyncapi.yaml from the contracts.
import { writeFileSync } from 'node:fs';
import { ASYNCAPI_PATH, renderAsyncApi } from './render.js';

writeFileSync(ASYNCAPI_PATH, await renderAsyncApi());
console.log(`wrote ${ASYNCAPI_PATH}`);
