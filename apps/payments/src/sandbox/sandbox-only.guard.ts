import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { ApiError, ErrorKind, type AuthenticatedRequest, type ErrorCodes } from '@byrd/platform';

/**
 * Simulations move money states no real shopper or scheme caused, so only sandbox keys may call
 * them; a live key is refused (403 BYRD403). Runs after the global API-key guard set the merchant.
 */
@Injectable()
export class SandboxOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const merchant = context.switchToHttp().getRequest<AuthenticatedRequest>().merchant;
    if (!merchant) throw new ApiError(ErrorKind.Unauthorized, 'A valid x-api-key header is required');
    if (merchant.mode !== 'sandbox') {
      throw new ApiError(ErrorKind.Forbidden, 'Sandbox simulations need a sandbox API key; this key is live');
    }
    return true;
  }
}

/** The guard's refusal, in the OpenAPI documents of the routes it guards. */
export const SANDBOX_ONLY: ErrorCodes = { 403: ['BYRD403'] };
