// @byrd/contracts: the types every service shares. reflect-metadata is loaded first, since
// the DTO decorators record metadata when their modules evaluate.
import 'reflect-metadata';

export * from './enums.js';
export * from './codes.js';
export * from './money.js';
export * from './ids.js';
export * from './expires-in.js';
export * from './phone.js';
export * from './decorators.js';
export * from './validate.js';
export { classTransformerMetadataStorage, hasCompiledPlan, validInstance } from './compiled-dto.js';
export * from './safe-input.js';
export * from './card-number.js';
export * from './card-in-text.js';
export * from './card-expiry.js';

export * from './events/catalogue.js';
export * from './events/content.js';
export * from './events/envelope.js';
export * from './events/transaction-event-map.js';

export * from './dto/common.dto.js';
export * from './dto/tokens.dto.js';
export * from './dto/orders.dto.js';
export * from './dto/payments.dto.js';
export * from './dto/operations.dto.js';
export * from './dto/transactions.dto.js';
export * from './dto/webhooks.dto.js';
export * from './dto/hosted-form.dto.js';
export * from './dto/checkout.dto.js';
export * from './dto/checkout-origins.dto.js';
export * from './dto/three-ds.dto.js';
export * from './dto/sandbox.dto.js';

export * from './rpc.js';

// OpenAPI schemas of the responses (@nestjs/swagger classes implementing the interfaces above).
export * from './responses/index.js';
