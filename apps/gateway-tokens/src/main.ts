import 'reflect-metadata';
import { runHttpService } from '@byrd/platform';
import { AppModule, SERVICE_NAME } from './app.module.js';
import { tokensConfigSchema, REQUIRED_IN_PRODUCTION } from './config.js';

await runHttpService(
  tokensConfigSchema,
  (config) => ({
    module: AppModule.forRoot(config),
    serviceName: SERVICE_NAME,
    description: 'Card vault: card tokens, encrypted at rest and masked on read.',
  }),
  REQUIRED_IN_PRODUCTION,
);
