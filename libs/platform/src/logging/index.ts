export * from './logging.js';
export * from './loggable-url.js';
