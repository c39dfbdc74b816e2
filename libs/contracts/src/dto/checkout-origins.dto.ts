import { ArrayMaxSize, IsArray, IsString, MaxLength } from 'class-validator';

/** Most origins a merchant may list (the platform's MAX_CHECKOUT_ORIGINS). */
export const MAX_CHECKOUT_ORIGINS = 20;

/**
 * `PUT /api/v2/checkout-origins`: the origins of the merchant's own sites (`https://shop.example.com`)
 * that the hosted form may send shoppers back to, post its messages to and be framed by, besides the
 * origin of each order's own `redirectUrl`. Replaces the list; `[]` clears it.
 */
export class CheckoutOriginsRequest {
  /**
   * Scheme, host and port only; https for live merchants. The host is a DNS host name (an IDN is
   * stored as punycode), an IPv4 address or a bracketed IPv6 address: no wildcards (`https://*`).
   */
  @IsArray()
  @ArrayMaxSize(MAX_CHECKOUT_ORIGINS)
  @IsString({ each: true })
  @MaxLength(255, { each: true })
  origins: string[];
}

/** `GET` / `PUT /api/v2/checkout-origins` → 200. */
export interface CheckoutOriginsResponse {
  /** The merchant's checkout origins, normalised (`https://shop.example.com`). */
  origins: string[];
}
