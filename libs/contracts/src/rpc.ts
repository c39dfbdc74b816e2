// NATS request/reply between services. Subjects start with `rpc.`, never overlapping the
// event stream's subjects (a stream would answer a request with its publish ack).
import type { ReturnCode } from './codes.js';
import type { FieldError } from './dto/common.dto.js';
import type { TokenResponse } from './dto/tokens.dto.js';
import type { TokenOptions } from './dto/orders.dto.js';
import type { CheckoutPaymentView } from './dto/checkout.dto.js';
import type {
  CardBrand,
  MerchantMode,
  OrderStatus,
  PaymentMethod,
  PaymentType,
  RequestTransactionMode,
} from './enums.js';

/** Request/reply subjects. */
export const RpcSubjects = {
  /** Hosted form BFF, payments → orders: order summary for a checkout key. */
  OrdersGet: 'rpc.orders.get',
  /** Payments → orders: a merchant's order, for a payment its API key makes. */
  OrdersGetForMerchant: 'rpc.orders.getForMerchant',
  /** Hosted form BFF → orders: the shopper pressed cancel. */
  OrdersCancel: 'rpc.orders.cancel',
  /** Hosted form BFF → orders: who may embed an order's form (serving the page, before any key is known). */
  OrdersEmbedding: 'rpc.orders.embedding',
  /** Payments → orders: reserve the order for one payment attempt, right before the acquirer is asked. */
  OrdersLockPayment: 'rpc.orders.lockPayment',
  /** Payments → orders: the attempt ended holding no money; the order is payable again. */
  OrdersUnlockPayment: 'rpc.orders.unlockPayment',
  /** Payments → tokens: store the card of a hosted-form payment that succeeded ("save my card"). */
  TokensCreate: 'rpc.tokens.create',
  /** Payments → tokens: the card behind a token (payments only). */
  TokensDetokenize: 'rpc.tokens.detokenize',
  /** Payments → tokens: a token's 3DS verification succeeded; the card it verified becomes the token's. */
  TokensVerified: 'rpc.tokens.verified',
  /** Tokens → payments: verify a new token's card with 3DS (its shopper is redirected). */
  PaymentsVerifyCard: 'rpc.payments.verifyCard',
  /** Tokens → payments: which 3DS verifications of these tokens succeeded (before a card never verified is forgotten). */
  PaymentsTokenVerifications: 'rpc.payments.tokenVerifications',
  /** Hosted form BFF → payments: the shopper pays the order (card data). */
  PaymentsCreate: 'rpc.payments.create',
  /** Hosted form BFF → payments: a payment of the order, as the page follows it. */
  PaymentsGet: 'rpc.payments.get',
} as const;
export type RpcSubject = (typeof RpcSubjects)[keyof typeof RpcSubjects];

/**
 * Subjects that carry card data, and the only services that may call each. Their requests are
 * signed by the caller and their replies signed by the serving service (RPC_SERVED_BY) and
 * encrypted to the caller (platform RpcIdentity).
 */
export const RPC_CALLERS: { readonly [S in RpcSubject]?: readonly string[] } = Object.freeze({
  'rpc.tokens.detokenize': ['payments'],
  'rpc.tokens.create': ['payments'],
  // Only payments knows a verification succeeded: anyone else could make an unverified card chargeable.
  'rpc.tokens.verified': ['payments'],
  'rpc.payments.verifyCard': ['gateway-tokens'],
  // Its answer decides whether the vault keeps a card: a forged one could make it forget a verified card.
  'rpc.payments.tokenVerifications': ['gateway-tokens'],
  'rpc.payments.create': ['hosted-form-bff'],
  // Whoever may lock or unlock an order decides whether it can be charged twice.
  'rpc.orders.lockPayment': ['payments'],
  // An order named by its merchant, not by its checkout key: that proves nothing unless the caller does.
  'rpc.orders.getForMerchant': ['payments'],
  'rpc.orders.unlockPayment': ['payments'],
});

/**
 * The service that serves each subject: it signs its replies, and its callers take a reply only when
 * signed by one of its keys in their RPC_TRUSTED_CALLERS, for that very request (platform Rpc). NATS
 * hands a request to every plain subscriber of the subject too, so an unsigned reply could come from
 * any client of the broker; the caller skips it and waits for the signed one. On the subjects not in
 * RPC_CALLERS (requests unsigned) the reply stays in clear, signed for the request's id (a header)
 * and bytes: a forged order summary could make payments charge another amount, a forged payment
 * send a shopper to another page.
 */
export const RPC_SERVED_BY: { readonly [S in RpcSubject]?: string } = Object.freeze({
  'rpc.orders.get': 'orders',
  'rpc.orders.cancel': 'orders',
  'rpc.orders.embedding': 'orders',
  'rpc.payments.get': 'payments',
  'rpc.tokens.detokenize': 'gateway-tokens',
  'rpc.tokens.create': 'gateway-tokens',
  'rpc.tokens.verified': 'gateway-tokens',
  'rpc.payments.verifyCard': 'payments',
  'rpc.payments.tokenVerifications': 'payments',
  'rpc.payments.create': 'payments',
  'rpc.orders.lockPayment': 'orders',
  'rpc.orders.getForMerchant': 'orders',
  'rpc.orders.unlockPayment': 'orders',
});

/**
 * The NATS headers a caller names a request of a subject not in RPC_CALLERS with (its requests are
 * not signed), so the serving service signs its reply, in clear, for it: a fresh id, and the caller.
 */
export const RPC_REQUEST_ID_HEADER = 'Byrd-Rpc-Request-Id';
export const RPC_CALLER_HEADER = 'Byrd-Rpc-Caller';

/**
 * Authenticated subjects whose requests carry a card (number, CVV), and the service that serves
 * each: the caller encrypts the signed request to that service's keys (platform RpcIdentity), so a
 * card never crosses the broker in clear, where any client of it could subscribe to the subject.
 */
export const RPC_SEALED_REQUESTS: { readonly [S in RpcSubject]?: string } = Object.freeze({
  'rpc.tokens.create': 'gateway-tokens',
  'rpc.payments.create': 'payments',
});

/**
 * Subjects whose handler may run twice for one call to the same effect: reads, and the order's lock
 * for one attempt (taking or giving back the same attempt's lock again is a no-op). A call of one of
 * these is asked again while no answer comes, its earlier tries kept open (`Rpc.call`): replicas of a
 * service share a subject as a queue group, and one that is paused (a long GC pause, a frozen VM)
 * still takes its share of the requests and answers none of them until it wakes up. Two tries of one
 * call may run at once, on two replicas.
 */
export const RPC_REPEATABLE: ReadonlySet<RpcSubject> = new Set<RpcSubject>([
  'rpc.orders.get',
  'rpc.orders.getForMerchant',
  'rpc.orders.embedding',
  'rpc.orders.lockPayment',
  'rpc.orders.unlockPayment',
  'rpc.tokens.detokenize',
  // Taking a verified card into its token again finds it there already: a no-op.
  'rpc.tokens.verified',
  'rpc.payments.get',
  'rpc.payments.tokenVerifications',
]);

/** Error reply of an RPC. */
export interface RpcError {
  /** Return code, mapped to HTTP by the caller (e.g. BYRD901 → 404). */
  code: ReturnCode;
  /** Human sentence. */
  message: string;
  /** Invalid input (BYRD900): each failing field by its dotted path, e.g. `card.number`. */
  errors?: FieldError[];
  /** Seconds to wait before trying again: the caller's HTTP answer carries it as `Retry-After`. */
  retryAfter?: number;
  /** Not a final answer (it holds only for now): the caller's idempotency-key must not keep it. */
  transient?: boolean;
}

/** Every RPC reply. */
export type RpcReply<T> = { ok: true; data: T } | { ok: false; error: RpcError };

/** A success reply. */
export function rpcOk<T>(data: T): RpcReply<T> {
  return { ok: true, data };
}

/** An error reply. */
export function rpcError<T = never>(
  code: ReturnCode,
  message: string,
  errors?: FieldError[],
  { retryAfter, transient }: Pick<RpcError, 'retryAfter' | 'transient'> = {},
): RpcReply<T> {
  return {
    ok: false,
    error: {
      code,
      message,
      ...(errors?.length ? { errors } : {}),
      ...(retryAfter !== undefined ? { retryAfter } : {}),
      ...(transient ? { transient } : {}),
    },
  };
}

/**
 * `rpc.orders.get` and `rpc.orders.cancel` request: access to an order is proven by its checkout
 * key (the browser's credential). These subjects take unsigned requests, so naming the order's
 * merchant proves nothing there: a service acting for an API key uses `rpc.orders.getForMerchant`.
 */
export interface OrderAccessRequest {
  orderId: string;
  checkoutKey: string;
}

/** `rpc.orders.getForMerchant` request: an order of the merchant a signed caller acts for. */
export interface MerchantOrderRequest {
  orderId: string;
  merchantId: string;
}

/** `rpc.orders.get` reply data: what the hosted form needs to render an order. */
export interface OrderSummary {
  orderId: string;
  status: OrderStatus;
  /** Decimal amount. */
  amount: string;
  /** Minor units. */
  isoAmount: number;
  currency: string;
  orderRef: string | null;
  merchantId: string;
  /** Display name of the merchant. */
  merchantName?: string;
  /** Sandbox orders show a test banner. */
  merchantMode?: MerchantMode;
  /** ISO 8601 UTC. */
  expiresAt: string;
  /** Order's redirect address. */
  redirectUrl: string | null;
  /** Methods the form may offer; empty means all. */
  allowedPaymentMethods: PaymentMethod[];
  /** Tokenization offer, when the order has one. */
  tokenOptions: TokenOptions | null;
  /** Card payments pre-authorise only. */
  isPreAuth: boolean;
  /** A payment attempt holds the order (at the acquirer now, or its money is held): no other may start. */
  paymentLocked: boolean;
  /**
   * A successful pre-authorisation holds the order (its money is reserved until the merchant
   * captures or releases it): there is nothing left for the shopper to pay. Absent from an older orders.
   */
  authorized?: boolean;
  /**
   * The attempt holding it (absent from an older orders): payments lets go of a lock whose holder
   * it knows ended without money, when orders has not heard of that end yet.
   */
  paymentLockedBy?: string | null;
}

/** `rpc.orders.embedding` request: the order of a page being served (the checkout key stays in the browser). */
export interface OrderEmbeddingRequest {
  orderId: string;
}

/** `rpc.orders.embedding` reply data: whose the order is and where it returns, nothing a shopper pays with. */
export interface OrderEmbedding {
  merchantId: string;
  redirectUrl: string | null;
}

/** `rpc.orders.cancel` reply data. */
export interface OrderCancelResult {
  orderId: string;
  status: OrderStatus;
}

/**
 * `rpc.orders.lockPayment` / `rpc.orders.unlockPayment` request. An order is locked by at most one
 * payment attempt (its transaction id) from just before the acquirer is asked until that attempt ends
 * holding no money; while locked it can be neither paid by another attempt nor canceled.
 */
export interface OrderPaymentLockRequest {
  orderId: string;
  merchantId: string;
  transactionId: string;
}

/** `rpc.orders.lockPayment` / `rpc.orders.unlockPayment` reply data. */
export interface OrderPaymentLock {
  orderId: string;
  /** The attempt holding the order after the call; null when none does. */
  lockedBy: string | null;
}

/** `rpc.tokens.create` request. */
export interface TokenCreateRpcRequest {
  merchantId: string;
  customReference: string | null;
  alias: string | null;
  card: { number: string; expiration: string; holder: string | null };
  transactionMode?: RequestTransactionMode;
  /**
   * When the payment whose card this saves was made (ISO 8601): the vault refuses (BYRD901) to save
   * a card its merchant deleted since. Absent from callers of the release before: no such check.
   */
  paidAt?: string;
}

/** `rpc.tokens.detokenize` request. */
export interface DetokenizeRpcRequest {
  merchantId: string;
  tokenId: string;
  /**
   * The card a re-tokenization staged under this verification, for the verification itself to
   * authenticate; the token's own card when none is staged under it (the default).
   */
  verificationId?: string;
}

/** `rpc.tokens.detokenize` reply data: the clear card number, for authorisation only. */
export interface DetokenizedCard {
  tokenId: string;
  number: string;
  expiration: string;
  holder: string | null;
  brand: CardBrand;
  isExpired: boolean;
  /**
   * The payments card verification (3DS) that must have succeeded before the token is charged;
   * null when the merchant tokenized with 3DS data of its own.
   */
  verificationId: string | null;
  /**
   * The verification of a card a re-tokenization of this token staged (a renewed expiry, ...): it
   * becomes the token's card only once that verification succeeded (`rpc.tokens.verified`); null
   * when none waits.
   */
  stagedVerificationId: string | null;
}

/** `rpc.tokens.verified` request: this 3DS verification of the token succeeded. */
export interface TokenVerifiedRpcRequest {
  merchantId: string;
  tokenId: string;
  verificationId: string;
}

/** `rpc.tokens.verified` reply data. */
export interface TokenVerifiedResult {
  /** False when nothing waited under that verification (taken already, or another one staged since). */
  promoted: boolean;
}

/** `rpc.payments.verifyCard` request: authenticate the shopper of a new token's card. */
export interface VerifyCardRpcRequest {
  merchantId: string;
  merchantMode: MerchantMode;
  tokenId: string;
  /** Where the shopper lands afterwards (`tokenId` and `status` added), if anywhere. */
  redirectUrl: string | null;
  /**
   * The id to start the verification under: the vault records it on the token before asking
   * (write-ahead), so a token whose verification never started is never taken for a verified one.
   * A new id when absent (a vault of an earlier version).
   */
  verificationId?: string;
}

/** `rpc.payments.verifyCard` reply data. */
export interface CardVerificationStarted {
  verificationId: string;
  /** The hosted 3DS page the shopper is sent to. */
  actionUrl: string;
}

/** `rpc.payments.tokenVerifications` request: the merchant's tokens the vault asks about. */
export interface TokenVerificationsRequest {
  merchantId: string;
  tokenIds: string[];
}

/** `rpc.payments.tokenVerifications` reply data: every succeeded 3DS verification of those tokens. */
export interface TokenVerifications {
  succeeded: { tokenId: string; verificationId: string }[];
}

/**
 * `rpc.payments.create` request: the hosted form pays an order, authorised by its checkout key.
 * Amount and currency are the order's; the payment is `initiatedFrom: HostedForm`.
 */
export interface CheckoutPaymentRpcRequest {
  orderId: string;
  checkoutKey: string;
  payment: {
    type: PaymentType;
    card?: { number: string; expiration: string; cvv: string; holder?: string };
    mbway?: { phoneNumber: string };
  };
  /**
   * Store the card in the vault once the payment succeeds (after its 3DS challenge, if any), under
   * the order's `tokenOptions.customReference`; refused when the order offers no tokenization.
   */
  saveCard: boolean;
  /** The browser request's id, for the logs. */
  requestId?: string;
  /**
   * The page's key for this payment attempt (its `idempotency-key` header, 1 to 255 characters),
   * scoped by the checkout key: a Multibanco or MB WAY attempt sent again with it (its answer was
   * lost, a double click) answers the payment it made, as it stands, instead of making another
   * (one reference, one MB WAY request), unless that one ended without money. Card payments are
   * held to one at a time by the order's payment lock instead.
   */
  idempotencyKey?: string;
}

/** `rpc.payments.get` request: one payment of the order, authorised by its checkout key. */
export interface CheckoutPaymentLookup {
  orderId: string;
  checkoutKey: string;
  transactionId: string;
}

/** Request and reply data of each subject. */
export interface RpcContracts {
  'rpc.orders.get': { request: OrderAccessRequest; response: OrderSummary };
  'rpc.orders.getForMerchant': { request: MerchantOrderRequest; response: OrderSummary };
  'rpc.orders.cancel': { request: OrderAccessRequest; response: OrderCancelResult };
  'rpc.orders.embedding': { request: OrderEmbeddingRequest; response: OrderEmbedding };
  'rpc.orders.lockPayment': { request: OrderPaymentLockRequest; response: OrderPaymentLock };
  'rpc.orders.unlockPayment': { request: OrderPaymentLockRequest; response: OrderPaymentLock };
  'rpc.tokens.create': { request: TokenCreateRpcRequest; response: TokenResponse };
  'rpc.tokens.detokenize': { request: DetokenizeRpcRequest; response: DetokenizedCard };
  'rpc.tokens.verified': { request: TokenVerifiedRpcRequest; response: TokenVerifiedResult };
  'rpc.payments.verifyCard': { request: VerifyCardRpcRequest; response: CardVerificationStarted };
  'rpc.payments.tokenVerifications': { request: TokenVerificationsRequest; response: TokenVerifications };
  'rpc.payments.create': { request: CheckoutPaymentRpcRequest; response: CheckoutPaymentView };
  'rpc.payments.get': { request: CheckoutPaymentLookup; response: CheckoutPaymentView };
}

/** Request type of a subject. */
export type RpcRequestOf<S extends RpcSubject> = RpcContracts[S]['request'];
/** Reply type of a subject. */
export type RpcReplyOf<S extends RpcSubject> = RpcReply<RpcContracts[S]['response']>;
