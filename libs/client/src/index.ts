// @byrd/client: a typed client of the Byrd payment platform's merchant API. Runtime: Node's fetch
// and node:crypto only. The API's types come from the platform's own contracts and are bundled
// into this package's declarations at build time (scripts/build.mjs), so they never drift.
export { ByrdClient } from './client.js';
export { DEFAULT_BASE_URL, type ByrdClientOptions, type RequestOptions } from './http.js';
export type { RetryOptions } from './retry.js';
export { ByrdError, ByrdApiError, ByrdConnectionError, WebhookVerificationError } from './errors.js';
// The resource classes are exported as values (the declarations name them as classes); they are
// built by ByrdClient, not by callers.
export {
  ByrdTimeoutError,
  CheckoutOrigins,
  Orders,
  Payments,
  shopperAction,
  Tokens,
  Transactions,
  type OperationAmount,
  type WaitOptions,
} from './resources/gateway.js';
export {
  Webhooks,
  WebhookSettingsApi,
  type ListWebhooksQuery,
  type WebhookSettingsInput,
} from './resources/webhooks.js';
export { Sandbox } from './resources/sandbox.js';
export type { HeaderPage, HeaderPageQuery } from './paging.js';
export { verifyWebhook, type VerifyWebhookOptions } from './verify-webhook.js';
export { listen, type ForwardResult, type ListenedDelivery, type ListenOptions } from './listen.js';
export { CLIENT_VERSION } from './version.js';

// The API's own types (requests, answers, enums, events), from @byrd/contracts.
export type * from './types.js';
