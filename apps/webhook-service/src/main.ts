import 'reflect-metadata';
import { runHttpService } from '@byrd/platform';
import { AppModule, SERVICE_NAME } from './app.module.js';
import { webhookConfigSchema } from './config.js';

await runHttpService(webhookConfigSchema, (config) => ({
  module: AppModule.forRoot(config),
  serviceName: SERVICE_NAME,
  version: '1.0',
  description:
    'Webhook service: subscribe URLs to order, transaction and chargeback events; query, inspect and resend deliveries.',
}));
