// Every closed value set of the public API, as `const` objects (runtime values) plus a
// same-named union type, so `TransactionStatus.Success` and `status: TransactionStatus` both work.

/** The union of an object's values; used to derive the enum types below. */
export type ValueOf<T> = T[keyof T];

/** The values of a const enum object as a frozen array, in declaration order. */
function valuesOf<T extends Record<string, string>>(enumObject: T): readonly ValueOf<T>[] {
  return Object.freeze(Object.values(enumObject) as ValueOf<T>[]);
}

/** Status of a transaction (PascalCase on the wire). */
export const TransactionStatus = {
  Created: 'Created',
  Processing: 'Processing',
  TemporaryFailed: 'TemporaryFailed',
  Denied: 'Denied',
  Success: 'Success',
  Canceled: 'Canceled',
  Error: 'Error',
  PendingMerchantAction: 'PendingMerchantAction',
} as const;
export type TransactionStatus = ValueOf<typeof TransactionStatus>;
export const TRANSACTION_STATUSES = valuesOf(TransactionStatus);

/** Status of an order (lowercase on the wire; `temporaryfailed` exists only as an event). */
export const OrderStatus = {
  Created: 'created',
  Pending: 'pending',
  Paid: 'paid',
  Refunded: 'refunded',
  Canceled: 'canceled',
  Expired: 'expired',
} as const;
export type OrderStatus = ValueOf<typeof OrderStatus>;
export const ORDER_STATUSES = valuesOf(OrderStatus);
/** Orders that may still be paid or canceled: no payment yet, or one in progress. */
export const OPEN_ORDER_STATUSES: readonly OrderStatus[] = Object.freeze(['created', 'pending']);

/** Kind of operation a transaction records. */
export const OperationType = {
  Payment: 'Payment',
  PreAuth: 'PreAuth',
  Capture: 'Capture',
  Refund: 'Refund',
  Release: 'Release',
} as const;
export type OperationType = ValueOf<typeof OperationType>;
export const OPERATION_TYPES = valuesOf(OperationType);

/** Card brand, detected from the BIN (uppercase on the wire). */
export const CardBrand = {
  Visa: 'VISA',
  Master: 'MASTER',
  Amex: 'AMEX',
  Diners: 'DINERS',
  Discover: 'DISCOVER',
  Jcb: 'JCB',
  Maestro: 'MAESTRO',
  UnionPay: 'UNIONPAY',
  Elo: 'ELO',
  Hipercard: 'HIPERCARD',
} as const;
export type CardBrand = ValueOf<typeof CardBrand>;
export const CARD_BRANDS = valuesOf(CardBrand);

/** Payment methods (webhook filters, hosted form, order options). */
export const PaymentMethod = {
  Card: 'card',
  Ideal: 'ideal',
  Multibanco: 'multibanco',
  MbWay: 'mbway',
  Multicaixa: 'multicaixa',
  Pickup: 'pickup',
  PayPal: 'paypal',
  BankTransfer: 'banktransfer',
  Floa: 'floa',
  Pix: 'pix',
} as const;
export type PaymentMethod = ValueOf<typeof PaymentMethod>;
export const PAYMENT_METHODS = valuesOf(PaymentMethod);

/**
 * `type` of a payment request: card payments (including token payments), and the async methods
 * whose outcome arrives later, when the shopper pays a Multibanco reference or accepts in MB WAY.
 */
export const PaymentType = { Card: 'card', Multibanco: 'multibanco', MbWay: 'mbway' } as const;
export type PaymentType = ValueOf<typeof PaymentType>;
export const PAYMENT_TYPES = valuesOf(PaymentType);

/** Payment types answered `BYRD201` Processing: the shopper completes them outside our pages. */
export type AsyncPaymentType = Exclude<PaymentType, 'card'>;
export const ASYNC_PAYMENT_TYPES: readonly AsyncPaymentType[] = Object.freeze([
  PaymentType.Multibanco,
  PaymentType.MbWay,
]);

/** True for `multibanco` and `mbway`. */
export function isAsyncPaymentType(value: unknown): value is AsyncPaymentType {
  return isOneOf(ASYNC_PAYMENT_TYPES, value);
}

/** Multibanco and MB WAY run on the Portuguese SIBS network, which settles in euros only. */
export const ASYNC_PAYMENT_CURRENCY = 'EUR';

/**
 * Whether a payment of `type` can be made in `currency`: payments refuses the others, so the
 * hosted form does not offer them.
 */
export function paymentTypeTakesCurrency(type: PaymentType, currency: string): boolean {
  return !isAsyncPaymentType(type) || currency === ASYNC_PAYMENT_CURRENCY;
}

/**
 * Whether a payment of `type` can only pre-authorise (hold the money until captured): cards can;
 * Multibanco and MB WAY settle in full when the shopper pays. An order asking for a
 * pre-authorisation (`cardOptions.isPreAuth`) is refused the others, and the hosted form does not
 * offer them for it.
 */
export function paymentTypePreAuthorises(type: PaymentType): boolean {
  return !isAsyncPaymentType(type);
}

/** `Type` of a token request: only card tokens exist. */
export const TokenType = { Card: 'Card' } as const;
export type TokenType = ValueOf<typeof TokenType>;
export const TOKEN_TYPES = valuesOf(TokenType);

/**
 * Credential-on-file mode of a tokenization or tokenized payment. `None` only appears in
 * responses (a plain card payment); requests accept {@link REQUEST_TRANSACTION_MODES}.
 */
export const TransactionMode = {
  None: 'None',
  InitialUnescheduled: 'initialUnescheduled',
  InitialRecurring: 'initialRecurring',
  CardHolderInitiatedUnescheduled: 'cardHolderInitiatedUnescheduled',
  MerchantInitiatedUnescheduled: 'merchantInitiatedUnescheduled',
  MerchantInitiatedRecurring: 'merchantInitiatedRecurring',
} as const;
export type TransactionMode = ValueOf<typeof TransactionMode>;
export const TRANSACTION_MODES = valuesOf(TransactionMode);
/** The five modes a caller may send. */
export type RequestTransactionMode = Exclude<TransactionMode, 'None'>;
export const REQUEST_TRANSACTION_MODES: readonly RequestTransactionMode[] = Object.freeze(
  TRANSACTION_MODES.filter((mode): mode is RequestTransactionMode => mode !== TransactionMode.None),
);

/** How outbound webhook deliveries authenticate to the subscriber. */
export const CredentialType = { ApiKey: 'api-key', Basic: 'basic' } as const;
export type CredentialType = ValueOf<typeof CredentialType>;
export const CREDENTIAL_TYPES = valuesOf(CredentialType);

/** Where a transaction was started. */
export const InitiatedFrom = { Server: 'Server', HostedForm: 'HostedForm', PayByLink: 'PayByLink' } as const;
export type InitiatedFrom = ValueOf<typeof InitiatedFrom>;
export const INITIATED_FROM_VALUES = valuesOf(InitiatedFrom);

/** Mode of a merchant's API key: sandbox keys hit the simulated acquirer. */
export const MerchantMode = { Sandbox: 'sandbox', Live: 'live' } as const;
export type MerchantMode = ValueOf<typeof MerchantMode>;
export const MERCHANT_MODES = valuesOf(MerchantMode);

/** Languages of the hosted form. */
export const HostedFormLocale = {
  EnUS: 'en_US',
  PtPT: 'pt_PT',
  EsES: 'es_ES',
  FrFR: 'fr_FR',
  PtBR: 'pt_BR',
} as const;
export type HostedFormLocale = ValueOf<typeof HostedFormLocale>;
export const HOSTED_FORM_LOCALES = valuesOf(HostedFormLocale);

/** Status of a 3DS authentication (`threeDSecure.status`, postAuth `status`). */
export const ThreeDSecureStatus = {
  Created: 'Created',
  Authorized: 'Authorized',
  Unauthorized: 'Unauthorized',
  Expired: 'Expired',
  NotEnrolled: 'NotEnrolled',
} as const;
export type ThreeDSecureStatus = ValueOf<typeof ThreeDSecureStatus>;
export const THREE_DS_STATUSES = valuesOf(ThreeDSecureStatus);

/** EMV 3DS `transStatus`. */
export const TransStatus = {
  /** Authenticated. */
  Authenticated: 'Y',
  /** Not authenticated, or denied. */
  NotAuthenticated: 'N',
  /** Authentication could not be performed. */
  Unavailable: 'U',
  /** Attempted: proof of an attempt was generated. */
  Attempted: 'A',
  /** A challenge is required. */
  Challenge: 'C',
  /** Decoupled authentication is required. */
  Decoupled: 'D',
  /** Rejected by the issuer. */
  Rejected: 'R',
  /** Informational only. */
  Informational: 'I',
} as const;
export type TransStatus = ValueOf<typeof TransStatus>;
export const TRANS_STATUSES = valuesOf(TransStatus);

/** `verificationMethod` of a card or 3DS object. */
export const VerificationMethod = { ThreeDSecure: 'ThreeDSecure' } as const;
export type VerificationMethod = ValueOf<typeof VerificationMethod>;

/** `threeDSecure.channel`: the browser SDK is the only channel. */
export const ThreeDSecureChannel = { Browser: 'Browser' } as const;
export type ThreeDSecureChannel = ValueOf<typeof ThreeDSecureChannel>;

/** `action.type` of a response that needs the shopper to go somewhere. */
export const ActionType = { Redirect: 'redirect' } as const;
export type ActionType = ValueOf<typeof ActionType>;

/**
 * Status of a chargeback (content of `chargeback.*` events). Decision: the public record is
 * silent, so the values mirror the six chargeback event names, PascalCase like transactions.
 */
export const ChargebackStatus = {
  Created: 'Created',
  Disputing: 'Disputing',
  PendingAction: 'PendingAction',
  Closed: 'Closed',
  Won: 'Won',
  Lost: 'Lost',
} as const;
export type ChargebackStatus = ValueOf<typeof ChargebackStatus>;
export const CHARGEBACK_STATUSES = valuesOf(ChargebackStatus);

/** True when `value` is one of `values`; narrows `unknown` input to the enum type. */
export function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value);
}
