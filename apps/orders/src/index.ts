// The public entry of @byrd/orders, for the tests of other services that run orders beside their own
// (in-process, on their run's database): its Nest module, configuration, entities and migrations.
export { AppModule } from './app.module.js';
export { ordersConfigSchema, type OrdersConfig } from './config.js';
export { ORDERS_ENTITIES, ORDERS_MIGRATIONS } from './database.js';
