export * from './common.response.js';
export * from './orders.response.js';
export * from './payments.response.js';
export * from './tokens.response.js';
export * from './three-ds.response.js';
export * from './webhooks.response.js';
export * from './checkout.response.js';
