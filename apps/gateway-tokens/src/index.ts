// The public entry of @byrd/gateway-tokens, for the tests of other services that run the vault beside
// their own (in-process, on their run's database): its Nest module, configuration, entities,
// migrations, and a new key-encryption key for VAULT_KEKS.
export { AppModule } from './app.module.js';
export { tokensConfigSchema } from './config.js';
export { TOKENS_ENTITIES, TOKENS_MIGRATIONS } from './database.js';
export { newKekEntry } from './vault/key-ring.js';
