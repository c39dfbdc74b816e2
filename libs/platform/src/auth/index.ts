export * from './api-keys.js';
export * from './api-key.registry.js';
export * from './api-key.guard.js';
export * from './merchants.js';
