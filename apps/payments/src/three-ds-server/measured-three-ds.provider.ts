import type { CardBrand } from '@byrd/contracts';
import { timed } from '@byrd/platform';
import type { PaymentsMetrics } from '../metrics/payments-metrics.js';
import type { AuthenticationResult, AuthenticationStart, ThreeDSProvider } from './three-ds-provider.js';

type Card = { number: string; brand: CardBrand };

/**
 * The wired 3DS server, measured: each call's duration (`three_ds_request_duration_seconds`) and each
 * authentication's end by flow and status (`three_ds_authentications_total`).
 */
export class MeasuredThreeDSProvider implements ThreeDSProvider {
  constructor(
    private readonly provider: ThreeDSProvider,
    private readonly metrics: PaymentsMetrics,
  ) {}

  async start(card: Card): Promise<AuthenticationStart> {
    const start = await this.measure(
      'start',
      () => this.provider.start(card),
      (s) => s.kind,
    );
    if (start.kind === 'frictionless') this.ended('frictionless', start.result);
    return start;
  }

  async answerChallenge(card: Card, answer: string): Promise<AuthenticationResult> {
    const result = await this.measure(
      'challenge',
      () => this.provider.answerChallenge(card, answer),
      () => 'answered',
    );
    return this.ended('challenge', result);
  }

  abandoned(brand: CardBrand, reason: 'canceled' | 'expired'): AuthenticationResult {
    return this.ended('abandoned', this.provider.abandoned(brand, reason));
  }

  acsUrls(threeDSBaseUrl: string): { methodUrl: string; challengeUrl: string } {
    return this.provider.acsUrls(threeDSBaseUrl);
  }

  private ended(flow: string, result: AuthenticationResult): AuthenticationResult {
    this.metrics.threeDSAuthentications.inc({ flow, outcome: result.status });
    return result;
  }

  private measure<T>(step: string, call: () => Promise<T>, resultOf: (value: T) => string): Promise<T> {
    return timed(this.metrics.threeDSRequests, { step }, 'result', call, resultOf);
  }
}
