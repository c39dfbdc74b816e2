export * from './idempotency.guard.js';
