export * from './platform.entities.js';
export * from './platform.migration.js';
export * from './data-source.js';
export * from './columns.js';
export * from './atomic-insert.js';
export * from './prepared.js';
export * from './group-commit.js';
export * from './transaction-lock.js';
