export * from './test-environment.js';
export * from './service-process.js';
export * from './http.js';
export * from './card-data.js';
export * from './card-expiry.js';
export * from './edge.js';
export * from './medium.js';
export * from './three-ds-shopper.js';
