import {
  createParamDecorator,
  Injectable,
  SetMetadata,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ApiError, ErrorKind } from '../errors/api-error.js';
import type { MerchantContext } from './api-keys.js';
import { ApiKeyRegistry } from './api-key.registry.js';

const PUBLIC_ROUTE = 'byrd:public';
const CHECKOUT_KEY_ROUTE = 'byrd:checkout-key';

/** Marks a route that needs no API key (health, docs, checkout-key routes that check their own credential). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);
/**
 * Lets a browser call the route with `?checkoutKey=` instead of an API key; the handler must then
 * prove access to the order itself (the key belongs to one order). An API key still wins when sent.
 */
export const AllowCheckoutKey = () => SetMetadata(CHECKOUT_KEY_ROUTE, true);

export type AuthenticatedRequest = FastifyRequest & { merchant?: MerchantContext };

/** The merchant the request was authenticated as. Every query of merchant data filters on its id. */
export const CurrentMerchant = createParamDecorator((_: unknown, ctx: ExecutionContext): MerchantContext => {
  const merchant = ctx.switchToHttp().getRequest<AuthenticatedRequest>().merchant;
  if (!merchant) throw new ApiError(ErrorKind.Unauthorized, 'A valid x-api-key header is required');
  return merchant;
});

@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly registry: ApiKeyRegistry,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = request.headers['x-api-key'];
    const apiKey = Array.isArray(header) ? header[0] : header;
    if (!apiKey && this.reflector.getAllAndOverride<boolean>(CHECKOUT_KEY_ROUTE, targets)) {
      const checkoutKey = (request.query as Record<string, unknown> | undefined)?.checkoutKey;
      if (typeof checkoutKey === 'string' && checkoutKey.length > 0) return true;
    }
    if (!apiKey) throw new ApiError(ErrorKind.Unauthorized, 'The x-api-key header is missing');
    const record = await this.registry.resolve(apiKey);
    if (!record) throw new ApiError(ErrorKind.Unauthorized, 'The API key is not valid');

    request.merchant = {
      merchantId: record.merchantId,
      merchantName: record.merchantName,
      mode: record.mode,
      scopes: record.scopes,
    };
    return true;
  }
}
