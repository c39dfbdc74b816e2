import type { MerchantMode, ReturnCode } from '@byrd/contracts';

/** What an acquirer can answer. TemporaryFailed means "no answer in time": the outcome is unknown. */
export type AcquirerOutcome = 'Success' | 'Denied' | 'Error' | 'TemporaryFailed';

export interface AcquirerResult {
  outcome: AcquirerOutcome;
  code: ReturnCode;
}

export interface AuthorizationRequest {
  transactionId: string;
  merchantMode: MerchantMode;
  operation: 'Payment' | 'PreAuth';
  isoAmount: number;
  currency: string;
  card: { number: string; expiration: string; cvv?: string };
  /** Result of a 3DS authentication, passed on to the issuer. */
  authentication?: { eci: string | null; aav: string | null; dsTransactionId: string };
}

export interface FollowUpRequest {
  transactionId: string;
  merchantMode: MerchantMode;
  operation: 'Capture' | 'Refund' | 'Release';
  sourceTransactionId: string;
  isoAmount: number;
  currency: string;
}

/** The processor behind payments. The sandbox ships; a real one is chosen by ACQUIRER. */
export interface Acquirer {
  readonly name: string;
  /** Whether it can take payments of merchants in this mode (the sandbox takes sandbox keys only). */
  supports(mode: MerchantMode): boolean;
  authorize(request: AuthorizationRequest): Promise<AcquirerResult>;
  followUp(request: FollowUpRequest): Promise<AcquirerResult>;
}

export const ACQUIRER = Symbol('ACQUIRER');

export const OUTCOME_CODES: Record<AcquirerOutcome, ReturnCode> = {
  Success: 'BYRD200',
  Denied: 'BYRD205',
  Error: 'BYRD299',
  TemporaryFailed: 'BYRD203',
};
