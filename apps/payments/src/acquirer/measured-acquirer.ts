import type { MerchantMode } from '@byrd/contracts';
import { timed } from '@byrd/platform';
import type { PaymentsMetrics } from '../metrics/payments-metrics.js';
import type { Acquirer, AcquirerResult, AuthorizationRequest, FollowUpRequest } from './acquirer.js';

/** The wired acquirer, with every call's outcome and duration in `acquirer_request_duration_seconds`. */
export class MeasuredAcquirer implements Acquirer {
  constructor(
    private readonly acquirer: Acquirer,
    private readonly metrics: PaymentsMetrics,
  ) {}

  get name(): string {
    return this.acquirer.name;
  }

  supports(mode: MerchantMode): boolean {
    return this.acquirer.supports(mode);
  }

  authorize(request: AuthorizationRequest): Promise<AcquirerResult> {
    return this.measure(
      request.operation,
      () => this.acquirer.authorize(request),
      (r) => r.outcome,
    );
  }

  followUp(request: FollowUpRequest): Promise<AcquirerResult> {
    return this.measure(
      request.operation,
      () => this.acquirer.followUp(request),
      (r) => r.outcome,
    );
  }

  lookup(reference: string, mode: MerchantMode): Promise<AcquirerResult | null> {
    return this.measure(
      'Lookup',
      () => this.acquirer.lookup(reference, mode),
      (r) => r?.outcome ?? 'none',
    );
  }

  void(reference: string, mode: MerchantMode): Promise<void> {
    return this.measure(
      'Void',
      () => this.acquirer.void(reference, mode),
      () => 'Success',
    );
  }

  /** A refusal before any request left (a live key on the sandbox) or a dead connection: `exception`. */
  private measure<T>(
    operation: string,
    call: () => Promise<T>,
    outcomeOf: (result: T) => string,
  ): Promise<T> {
    return timed(this.metrics.acquirerRequests, { operation }, 'outcome', call, outcomeOf);
  }
}
