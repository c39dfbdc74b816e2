export * from './rate-limit.config.js';
export * from './rate-limiter.js';
export * from './rate-limit.module.js';
