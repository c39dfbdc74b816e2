import { Injectable } from '@nestjs/common';
import type { MerchantMode } from '@byrd/contracts';
import { ApiError, ErrorKind } from '@byrd/platform';
import {
  OUTCOME_CODES,
  type Acquirer,
  type AcquirerOutcome,
  type AcquirerResult,
  type AuthorizationRequest,
  type FollowUpRequest,
} from './acquirer.js';
import { amountOutcome, sandboxCard } from './sandbox-rules.js';

/** The test gateway's acquirer: test cards and amount rules decide every outcome. */
@Injectable()
export class SandboxAcquirer implements Acquirer {
  readonly name = 'SIMULATED';

  supports(mode: MerchantMode): boolean {
    return mode === 'sandbox';
  }

  async authorize(request: AuthorizationRequest): Promise<AcquirerResult> {
    this.refuseLive(request.merchantMode);
    const card = sandboxCard(request.card.number);
    // Card rules win over amount rules where both apply.
    return result(card.outcome ?? amountOutcome(request.operation, request.isoAmount, request.currency));
  }

  async followUp(request: FollowUpRequest): Promise<AcquirerResult> {
    this.refuseLive(request.merchantMode);
    return result(amountOutcome(request.operation, request.isoAmount, request.currency));
  }

  private refuseLive(mode: MerchantMode): void {
    if (!this.supports(mode)) {
      throw new ApiError(
        ErrorKind.BusinessRule,
        'No live acquirer is configured on this platform; use a sandbox key',
        {
          code: 'BYRD291',
        },
      );
    }
  }
}

function result(outcome: AcquirerOutcome): AcquirerResult {
  return { outcome, code: OUTCOME_CODES[outcome] };
}
