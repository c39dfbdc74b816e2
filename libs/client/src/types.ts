// The API's own types, from @byrd/contracts (the services' source of truth). Written as aliases,
// not re-exports: contracts' enums and request DTOs are values too (const objects, classes), and a
// re-export would let the bundled declarations promise values this package does not ship.
import type * as Contracts from '@byrd/contracts';

export type Action = Contracts.Action;
export type AsyncPaymentSimulation = Contracts.AsyncPaymentSimulation;
export type CaptureRequest = Contracts.CaptureRequest;
export type CaptureResponse = Contracts.CaptureResponse;
export type CardBrand = Contracts.CardBrand;
export type ChargebackAction = Contracts.ChargebackAction;
export type ChargebackEventContent = Contracts.ChargebackEventContent;
export type ChargebackResponse = Contracts.ChargebackResponse;
export type ChargebackStatus = Contracts.ChargebackStatus;
export type CompletePaymentRequest = Contracts.CompletePaymentRequest;
export type CreateOrderRequest = Contracts.CreateOrderRequest;
export type CreatePaymentRequest = Contracts.CreatePaymentRequest;
export type CreateTokenRequest = Contracts.CreateTokenRequest;
export type CreateTokenResponse = Contracts.CreateTokenResponse;
export type CreateWebhookSettingsRequest = Contracts.CreateWebhookSettingsRequest;
export type CredentialType = Contracts.CredentialType;
export type ErrorBody = Contracts.ErrorBody;
export type EventName = Contracts.EventName;
export type FieldError = Contracts.FieldError;
export type ListPagination = Contracts.ListPagination;
export type ListTokensQuery = Contracts.ListTokensQuery;
export type ListTransactionsQuery = Contracts.ListTransactionsQuery;
export type OpenChargebackRequest = Contracts.OpenChargebackRequest;
export type OperationType = Contracts.OperationType;
export type OrderDetailsResponse = Contracts.OrderDetailsResponse;
export type OrderEventContent = Contracts.OrderEventContent;
export type OrderResponse = Contracts.OrderResponse;
export type OrderStatus = Contracts.OrderStatus;
export type OrderTransaction = Contracts.OrderTransaction;
export type PaymentMethod = Contracts.PaymentMethod;
export type PaymentResponse = Contracts.PaymentResponse;
export type PaymentType = Contracts.PaymentType;
export type PublicTransactionEventContent = Contracts.PublicTransactionEventContent;
export type RefundRequest = Contracts.RefundRequest;
export type RefundResponse = Contracts.RefundResponse;
export type ReleaseRequest = Contracts.ReleaseRequest;
export type ReleaseResponse = Contracts.ReleaseResponse;
export type ReturnCode = Contracts.ReturnCode;
export type TokenListResponse = Contracts.TokenListResponse;
export type TokenResponse = Contracts.TokenResponse;
export type TransactionListResponse = Contracts.TransactionListResponse;
export type TransactionMode = Contracts.TransactionMode;
export type TransactionResponse = Contracts.TransactionResponse;
export type TransactionStatus = Contracts.TransactionStatus;
export type WebhookAttempt = Contracts.WebhookAttempt;
export type WebhookCredential = Contracts.WebhookCredential;
export type WebhookRecord = Contracts.WebhookRecord;
export type WebhookSettings = Contracts.WebhookSettings;
export type ListEnvelope<T> = Contracts.ListEnvelope<T>;
/** A webhook body; narrowed by `event` (e.g. `WebhookDelivery<'order.paid'>`). */
export type WebhookDelivery<E extends EventName = EventName> = Contracts.WebhookDelivery<E>;
