import 'reflect-metadata';
import { runHttpService } from '@byrd/platform';
import { AppModule, SERVICE_NAME } from './app.module.js';
import { ordersConfigSchema, REQUIRED_IN_PRODUCTION } from './config.js';

await runHttpService(
  ordersConfigSchema,
  (config) => ({
    module: AppModule.forRoot(config),
    serviceName: SERVICE_NAME,
    description: 'Orders: create and read orders, the basis of the hosted payment form.',
  }),
  REQUIRED_IN_PRODUCTION,
);
