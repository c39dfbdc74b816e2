import type { MerchantMode, ReturnCode } from '@byrd/contracts';

/** What an acquirer can answer. TemporaryFailed means "no answer in time": the outcome is unknown. */
export type AcquirerOutcome = 'Success' | 'Denied' | 'Error' | 'TemporaryFailed';

export interface AcquirerResult {
  outcome: AcquirerOutcome;
  code: ReturnCode;
}

interface AcquirerRequest {
  /**
   * Our transaction id, the same one we store: the acquirer de-duplicates on it (a repeated request
   * gets the first answer, never a second authorisation) and answers `lookup` and `void` by it.
   */
  reference: string;
  merchantMode: MerchantMode;
  isoAmount: number;
  currency: string;
}

export interface AuthorizationRequest extends AcquirerRequest {
  operation: 'Payment' | 'PreAuth';
  card: { number: string; expiration: string; cvv?: string };
  /** Result of a 3DS authentication, passed on to the issuer. */
  authentication?: { eci: string | null; aav: string | null; dsTransactionId: string };
}

export interface FollowUpRequest extends AcquirerRequest {
  operation: 'Capture' | 'Refund' | 'Release';
  /** The reference of the payment or pre-authorisation it follows up. */
  sourceReference: string;
}

/** The processor behind payments. The sandbox ships; a real one is chosen by ACQUIRER. */
export interface Acquirer {
  readonly name: string;
  /** Whether it can take payments of merchants in this mode (the sandbox takes sandbox keys only). */
  supports(mode: MerchantMode): boolean;
  authorize(request: AuthorizationRequest): Promise<AcquirerResult>;
  followUp(request: FollowUpRequest): Promise<AcquirerResult>;
  /**
   * What the acquirer holds for a reference (its final outcome), or null when no request with it ever
   * reached it. A reversed (voided) one answers Denied.
   */
  lookup(reference: string, mode: MerchantMode): Promise<AcquirerResult | null>;
  /**
   * Reverses whatever the acquirer holds under the reference and refuses any request with it from now
   * on (one still on the wire included): what a recovery does with an attempt it cannot finish.
   */
  void(reference: string, mode: MerchantMode): Promise<void>;
}

export const ACQUIRER = Symbol('ACQUIRER');

export const OUTCOME_CODES: Record<AcquirerOutcome, ReturnCode> = {
  Success: 'BYRD200',
  Denied: 'BYRD205',
  Error: 'BYRD299',
  TemporaryFailed: 'BYRD203',
};

export function acquirerResult(outcome: AcquirerOutcome): AcquirerResult {
  return { outcome, code: OUTCOME_CODES[outcome] };
}
