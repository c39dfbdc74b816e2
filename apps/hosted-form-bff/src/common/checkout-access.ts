import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { CHECKOUT_KEY_HEADER, isGuid } from '@byrd/contracts';
import { ApiError, ErrorKind, type ErrorCodes } from '@byrd/platform';

/** What proves the shopper's access to one order: the order id and the order's checkout key. */
export interface CheckoutAccess {
  orderId: string;
  checkoutKey: string;
}

/** The answer to a wrong order id, a wrong checkout key or both: it never says which one was wrong. */
export function orderNotFound(): ApiError {
  return new ApiError(ErrorKind.NotFound, 'No order matches this order id and checkout key');
}

/**
 * The `x-checkout-key` header. Missing → 401 BYRD401. A value that is not a GUID cannot open any
 * order, so it answers like a wrong key (404).
 */
export const CheckoutKey = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const header = context.switchToHttp().getRequest<FastifyRequest>().headers[CHECKOUT_KEY_HEADER];
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) {
    throw new ApiError(
      ErrorKind.Unauthorized,
      `The ${CHECKOUT_KEY_HEADER} header with the order's checkout key is missing`,
    );
  }
  if (!isGuid(value)) throw orderNotFound();
  return value.toLowerCase();
});

/** The request id Fastify pinned on the request (the caller's `x-request-id` when sane). */
export const RequestId = createParamDecorator((_: unknown, context: ExecutionContext): string =>
  String(context.switchToHttp().getRequest<FastifyRequest>().id),
);

/**
 * What every hosted-form call may answer besides its own result: no checkout key (401), a wrong
 * order, key or payment id (404), the address over its rate limit (429), the rate-limit store or
 * a service behind the BFF unavailable (503).
 */
export const CHECKOUT_API_ERRORS: ErrorCodes = {
  401: ['BYRD401'],
  404: ['BYRD901'],
  429: ['BYRD206'],
  503: ['BYRD999'],
};
