import 'reflect-metadata';
import { runHttpService } from '@byrd/platform';
import { AppModule, SERVICE_NAME } from './app.module.js';
import { checkoutConfigSchema, REQUIRED_IN_PRODUCTION } from './config.js';

await runHttpService(
  checkoutConfigSchema,
  (config) => ({
    module: AppModule.forRoot(config),
    serviceName: SERVICE_NAME,
    description:
      "The hosted payment form's backend: the order the page renders, its payments (card with 3DS, Multibanco, MB WAY) and the cancel button, authorised by the order's checkout key (x-checkout-key).",
  }),
  REQUIRED_IN_PRODUCTION,
);
