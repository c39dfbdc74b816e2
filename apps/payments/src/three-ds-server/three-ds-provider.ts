import type { CardBrand, ThreeDSecureStatus, TransStatus } from '@byrd/contracts';

/** The outcome of an authentication, as the issuer's ACS reports it (EMV 3DS). */
export interface AuthenticationResult {
  status: Exclude<ThreeDSecureStatus, 'Created'>;
  transStatus: TransStatus;
  transStatusReason: string | null;
  eci: string | null;
  aav: string | null;
}

export type AuthenticationStart =
  { kind: 'frictionless'; result: AuthenticationResult } | { kind: 'challenge' };

/** The 3DS server. The sandbox ships; a real one is chosen by THREE_DS_PROVIDER. */
export interface ThreeDSProvider {
  /** Decides whether the shopper must be challenged, or the result straight away. */
  start(card: { number: string; brand: CardBrand }): Promise<AuthenticationStart>;
  /** Checks the shopper's answer to the issuer's challenge. */
  answerChallenge(card: { number: string; brand: CardBrand }, answer: string): Promise<AuthenticationResult>;
  /** The result when the shopper gives up or the challenge times out. */
  abandoned(brand: CardBrand, reason: 'canceled' | 'expired'): AuthenticationResult;
  /**
   * The issuer's pages the browser is sent to: its 3DS Method (device data, in a hidden iframe)
   * and its challenge page. `threeDSBaseUrl` is {threeds_url}, where the sandbox ACS is served.
   */
  acsUrls(threeDSBaseUrl: string): { methodUrl: string; challengeUrl: string };
}

export const THREE_DS_PROVIDER = Symbol('THREE_DS_PROVIDER');
export const PROTOCOL_VERSION = '2.2.0';
