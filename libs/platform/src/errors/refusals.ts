import { ApiError, ErrorKind } from './api-error.js';

/**
 * The refusals the services answer, one factory each carrying its kind (so its HTTP status) and its
 * return code of API-FACTS.md: a caller says what was refused and why, never which code that is.
 */
export const Refusal = {
  /** BYRD205, 422: the operation is not allowed in the current state (of the order, payment, ...). */
  notAllowed(message: string): ApiError {
    return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD205' });
  },
  /**
   * BYRD205, 422 with `Retry-After`: not allowed while something else is under way (an attempt
   * holding the order, captures at the acquirer). Not a final answer, so an `idempotency-key` does
   * not keep it: the same request with the same key may succeed once that has ended.
   */
  notAllowedYet(message: string, retryAfterSeconds = 5): ApiError {
    return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD205', retryAfter: retryAfterSeconds });
  },
  /**
   * BYRD205, 422 without `Retry-After`: not allowed until the caller itself acts (an order held by
   * a successful pre-authorisation, until it is captured or released: days, perhaps). Waiting alone
   * changes nothing, so no time to try again is given; but the refusal is not final either, so an
   * `idempotency-key` does not keep it: the same request pays once the hold is released.
   */
  notAllowedUntilReleased(message: string): ApiError {
    return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD205', transient: true });
  },
  /**
   * BYRD205, 422 without `Retry-After`: the merchant already has as many of something as it may
   * (live webhook settings). Only the merchant itself makes room (deleting one), so no time to try
   * again is given; not final either, so an `idempotency-key` does not keep it: the same request
   * succeeds once there is room.
   */
  limitReached(message: string): ApiError {
    return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD205', transient: true });
  },
  /** BYRD230, 422: the payment was already fully refunded (or charged back). */
  alreadyRefunded(message: string): ApiError {
    return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD230' });
  },
  /** BYRD231, 422: the refund asks for more than the payment still has. */
  refundExceedsBalance(message: string): ApiError {
    return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD231' });
  },
  /** BYRD240, 422: the card (or the token standing for it) is expired. */
  cardExpired(message: string): ApiError {
    return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD240' });
  },
  /** BYRD291, 422: no acquirer or processor serves this merchant's mode. */
  noAcquirer(message: string): ApiError {
    return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD291' });
  },
  /** BYRD292, 422: the order does not accept this payment method. */
  methodNotAccepted(message: string): ApiError {
    return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD292' });
  },
  /** BYRD201, 409: the shopper has not answered yet; asking again later can succeed. */
  awaitingShopper(message: string): ApiError {
    return new ApiError(ErrorKind.Conflict, message, { code: 'BYRD201' });
  },
  /** BYRD409, 409: a request with this idempotency-key is still running; retry it later, same key. */
  keyInProgress(message = 'A request with this idempotency-key is still being processed'): ApiError {
    return new ApiError(ErrorKind.Conflict, message, { code: 'BYRD409', retryAfter: 1 });
  },
  /** BYRD900, 422: an idempotency key reused with a different request. */
  idempotencyKeyReused(message: string): ApiError {
    return new ApiError(ErrorKind.BusinessRule, message, { code: 'BYRD900' });
  },
  /** BYRD403, 403: the caller is known but may not do this. */
  forbidden(message: string): ApiError {
    return new ApiError(ErrorKind.Forbidden, message, { code: 'BYRD403' });
  },
} as const;
