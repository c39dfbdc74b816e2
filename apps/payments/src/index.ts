// The public entry of @byrd/payments, for the tests of other services that run payments beside their
// own (in-process, on their run's database): its Nest module, configuration, entities and migrations.
export { AppModule } from './app.module.js';
export { paymentsConfigSchema } from './config.js';
export { PAYMENTS_ENTITIES, PAYMENTS_MIGRATIONS } from './database.js';
// Its sweeps, which those tests run at a moment of their choosing.
export { RecoverAcquirerCalls } from './recovery/recover-acquirer-calls.js';
export { SaveCardsLeftBehind } from './payments/save-cards-left-behind.sweep.js';
