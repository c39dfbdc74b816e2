import { createHash, randomInt } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { AsyncPaymentType, MerchantMode } from '@byrd/contracts';
import type {
  AsyncPaymentProvider,
  AsyncPaymentRequest,
  MultibancoInstruction,
} from './async-payment-provider.js';

const MINUTE = 60_000;

/**
 * The test gateway's async processor. Lifetimes follow the real methods: MB WAY requests lapse
 * after 5 minutes in the app; Multibanco references here last 3 days (an order's expiry caps both).
 */
const LIFETIME_MS: Record<AsyncPaymentType, number> = {
  multibanco: 3 * 24 * 60 * MINUTE,
  mbway: 5 * MINUTE,
};

@Injectable()
export class SandboxAsyncPaymentProvider implements AsyncPaymentProvider {
  readonly name = 'SIMULATED';

  supports(mode: MerchantMode): boolean {
    return mode === 'sandbox';
  }

  lifetimeMs(type: AsyncPaymentType): number {
    return LIFETIME_MS[type];
  }

  async multibancoReference(request: AsyncPaymentRequest): Promise<MultibancoInstruction> {
    return {
      entity: sandboxEntityOf(request.merchantId),
      reference: String(randomInt(0, 1_000_000_000)).padStart(9, '0'),
    };
  }

  async requestMbWay(): Promise<void> {
    // Nothing to send: the shopper's answer comes from POST /api/v2/sandbox/payments/{id}/{action}.
  }

  async cancel(): Promise<void> {
    // Nothing to void: the sandbox network is the simulation endpoint. A `pay` simulated after the
    // void plays a payment that got through anyway, which is recorded and refunded at once.
  }
}

/** A merchant keeps one entity, as with a real provider contract: 5 digits from 10000 to 99999. */
export function sandboxEntityOf(merchantId: string): string {
  const hash = createHash('sha256').update(merchantId).digest().readUInt32BE(0);
  return String(10_000 + (hash % 90_000));
}
