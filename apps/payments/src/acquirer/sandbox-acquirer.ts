import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { MerchantMode } from '@byrd/contracts';
import { ApiError, ErrorKind, queryPrepared } from '@byrd/platform';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';
import {
  acquirerResult,
  type Acquirer,
  type AcquirerOutcome,
  type AcquirerResult,
  type AuthorizationRequest,
  type FollowUpRequest,
} from './acquirer.js';
import { amountOutcome, sandboxCard } from './sandbox-rules.js';

type Recorded = Exclude<AcquirerOutcome, 'TemporaryFailed'>;

/** Records a request once per reference; a repeat (or a voided reference) gets what was recorded. */
const RECORD = `
  WITH fresh AS (
    INSERT INTO sandbox_acquirer_ledger (reference, operation, outcome, iso_amount, currency)
    VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (reference) DO NOTHING
    RETURNING outcome, voided_at, true AS fresh)
  SELECT outcome, voided_at, fresh FROM fresh
  UNION ALL
  SELECT outcome, voided_at, false FROM sandbox_acquirer_ledger WHERE reference = $1 AND NOT EXISTS (SELECT 1 FROM fresh)`;

/**
 * The test gateway's acquirer: test cards and amount rules decide every outcome, and, like a real
 * acquirer, it keeps what it decided under the caller's reference (table sandbox_acquirer_ledger,
 * written on its own, never in the caller's transaction), so a repeated request never authorises
 * twice and a caller that lost the answer can look it up. A "timeout" is an authorisation the issuer
 * approved whose answer never came back: the caller hears TemporaryFailed, the ledger says Success.
 * SANDBOX_ACQUIRER_DELAY_MS holds every answer after it is recorded (crash and recovery drills).
 */
@Injectable()
export class SandboxAcquirer implements Acquirer {
  readonly name = 'SIMULATED';

  constructor(
    private readonly dataSource: DataSource,
    @Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig,
  ) {}

  supports(mode: MerchantMode): boolean {
    return mode === 'sandbox';
  }

  async authorize(request: AuthorizationRequest): Promise<AcquirerResult> {
    this.refuseLive(request.merchantMode);
    // Card rules win over amount rules where both apply.
    const decided =
      sandboxCard(request.card.number).outcome ??
      amountOutcome(request.operation, request.isoAmount, request.currency);
    return this.record(request, decided);
  }

  async followUp(request: FollowUpRequest): Promise<AcquirerResult> {
    this.refuseLive(request.merchantMode);
    return this.record(request, amountOutcome(request.operation, request.isoAmount, request.currency));
  }

  async lookup(reference: string, mode: MerchantMode): Promise<AcquirerResult | null> {
    this.refuseLive(mode);
    const row = await this.lookupRow(reference);
    return row ? answerOf(row) : null;
  }

  private async lookupRow(reference: string) {
    const [row] = await this.dataSource.query<{ outcome: Recorded; voided_at: Date | null }[]>(
      `SELECT outcome, voided_at FROM sandbox_acquirer_ledger WHERE reference = $1`,
      [reference],
    );
    return row as { outcome: Recorded; voided_at: Date | null } | undefined;
  }

  async void(reference: string, mode: MerchantMode): Promise<void> {
    this.refuseLive(mode);
    // A reference never seen is recorded as voided, so a request still on the wire is refused.
    await this.dataSource.query(
      `INSERT INTO sandbox_acquirer_ledger (reference, operation, outcome, iso_amount, currency, voided_at)
       VALUES ($1, 'Void', 'Denied', 0, 'XXX', now())
       ON CONFLICT (reference) DO UPDATE SET voided_at = coalesce(sandbox_acquirer_ledger.voided_at, now())`,
      [reference],
    );
  }

  private async record(
    request: AuthorizationRequest | FollowUpRequest,
    decided: AcquirerOutcome,
  ): Promise<AcquirerResult> {
    const recorded: Recorded = decided === 'TemporaryFailed' ? 'Success' : decided;
    let [row] = await queryPrepared<{ outcome: Recorded; voided_at: Date | null; fresh: boolean }>(
      this.dataSource,
      RECORD,
      [request.reference, request.operation, recorded, request.isoAmount, request.currency],
    );
    // A concurrent request with the same reference committed after this statement's snapshot.
    row ??= { ...(await this.lookupRow(request.reference))!, fresh: false };
    if (this.config.SANDBOX_ACQUIRER_DELAY_MS > 0) await sleep(this.config.SANDBOX_ACQUIRER_DELAY_MS);
    if (row.fresh && decided === 'TemporaryFailed') return acquirerResult('TemporaryFailed');
    return answerOf(row);
  }

  private refuseLive(mode: MerchantMode): void {
    if (!this.supports(mode)) {
      throw new ApiError(
        ErrorKind.BusinessRule,
        'No live acquirer is configured on this platform; use a sandbox key',
        { code: 'BYRD291' },
      );
    }
  }
}

function answerOf(row: { outcome: Recorded; voided_at: Date | null }): AcquirerResult {
  return acquirerResult(row.voided_at ? 'Denied' : row.outcome);
}
