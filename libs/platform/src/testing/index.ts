export * from './test-environment.js';
export * from './service-process.js';
