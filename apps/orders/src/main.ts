import 'reflect-metadata';
import { ConfigError, loadConfig, startHttpService } from '@byrd/platform';
import { AppModule, SERVICE_NAME } from './app.module.js';
import { ordersConfigSchema } from './config.js';

try {
  const config = loadConfig(ordersConfigSchema);
  await startHttpService(
    {
      module: AppModule.forRoot(config),
      serviceName: SERVICE_NAME,
      description: 'Orders: create and read orders, the basis of the hosted payment form.',
    },
    config,
  );
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
