export * from './api-error.js';
export * from './error-body.js';
export * from './exception.filter.js';
export * from './refusals.js';
export * from './validation.js';
