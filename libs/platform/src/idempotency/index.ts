export * from './idempotency.interceptor.js';
