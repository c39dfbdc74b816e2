import 'reflect-metadata';
import { runHttpService } from '@byrd/platform';
import { AppModule, SERVICE_NAME } from './app.module.js';
import { paymentsConfigSchema, REQUIRED_IN_PRODUCTION } from './config.js';

await runHttpService(
  paymentsConfigSchema,
  (config) => ({
    module: AppModule.forRoot(config),
    serviceName: SERVICE_NAME,
    description: 'Payments: card payments with 3D Secure, capture, refund, release and transaction queries.',
  }),
  REQUIRED_IN_PRODUCTION,
);
