// `@byrd/contracts/browser`: the part of the contracts a browser page may load (the hosted form).
// Only modules without Node or server-library imports are re-exported; the request and response
// shapes are types only, so their validation decorators never reach the page's bundle.
// browser.spec.ts fails when a module below starts importing a package.
export * from './card-expiry.js';
export * from './enums.js';
export * from './ids.js';
export * from './phone.js';
export * from './hosted-form-configs.js';
export type {
  CheckoutCancelResult,
  CheckoutOrderView,
  CheckoutPaymentRequest,
  CheckoutPaymentView,
} from './dto/checkout.dto.js';
