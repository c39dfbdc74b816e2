import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { MerchantMode } from '@byrd/contracts';
import { columnsOf, GroupCommit, queryPrepared, Refusal } from '@byrd/platform';
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

/**
 * Records a batch of requests, each once per reference: the new ones are inserted, a repeat (or a
 * voided reference) returns what was recorded first. One statement for the whole batch that never
 * reads the table: a repeat takes the no-op update of ON CONFLICT, which locks and returns the row
 * recorded first (also one committed by a concurrent batch a moment ago); `xmax = 0` tells the rows
 * this statement inserted. A reference twice in one batch is recorded as it first arrived (an upsert
 * may touch a row only once per statement).
 */
const RECORD = `
  INSERT INTO sandbox_acquirer_ledger AS l (reference, operation, outcome, iso_amount, currency)
  SELECT DISTINCT ON (reference) reference, operation, outcome, iso_amount, currency
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::text[]) WITH ORDINALITY
      AS i(reference, operation, outcome, iso_amount, currency, arrival)
   ORDER BY reference, arrival
  ON CONFLICT (reference) DO UPDATE SET reference = excluded.reference
  RETURNING l.reference, l.outcome, l.voided_at, (l.xmax = 0) AS fresh`;

interface LedgerRow {
  reference: string;
  outcome: Recorded;
  voided_at: Date | null;
  fresh: boolean;
}

type LedgerEntry = [
  reference: string,
  operation: string,
  outcome: Recorded,
  isoAmount: number,
  currency: string,
];

/**
 * The test gateway's acquirer: test cards and amount rules decide every outcome, and, like a real
 * acquirer, it keeps what it decided under the caller's reference (table sandbox_acquirer_ledger,
 * written on its own, never in the caller's transaction), so a repeated request never authorises
 * twice and a caller that lost the answer can look it up. A "timeout" is an authorisation the issuer
 * approved whose answer never came back: the caller hears TemporaryFailed, the ledger says Success.
 * Requests that arrive while a ledger write runs are written together next (`GroupCommit`), so the
 * simulated acquirer costs the payments database about one statement per batch, not per payment.
 * SANDBOX_ACQUIRER_DELAY_MS holds every answer after it is recorded (crash and recovery drills).
 */
@Injectable()
export class SandboxAcquirer implements Acquirer {
  readonly name = 'SIMULATED';
  /** Requests arriving while the ledger write in flight runs are written together next (group commit). */
  private readonly ledger = new GroupCommit<LedgerEntry, LedgerRow>((batch) => this.writeBatch(batch), {
    maxBatch: 256,
    maxInFlight: 1,
  });

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
    const row = await this.ledger.submit([
      request.reference,
      request.operation,
      recorded,
      request.isoAmount,
      request.currency,
    ]);
    if (this.config.SANDBOX_ACQUIRER_DELAY_MS > 0) await sleep(this.config.SANDBOX_ACQUIRER_DELAY_MS);
    if (row.fresh && decided === 'TemporaryFailed') return acquirerResult('TemporaryFailed');
    return answerOf(row);
  }

  /** One answer per entry, in order; a reference twice in one batch is fresh only the first time. */
  private async writeBatch(batch: LedgerEntry[]): Promise<LedgerRow[]> {
    const rows = await queryPrepared<LedgerRow>(this.dataSource, RECORD, columnsOf(batch));
    const byReference = new Map(rows.map((row) => [row.reference, row]));
    return batch.map(([reference]) => {
      const row = byReference.get(reference)!;
      // The same reference twice in one batch: only the first was recorded by this request.
      byReference.set(reference, { ...row, fresh: false });
      return row;
    });
  }

  private refuseLive(mode: MerchantMode): void {
    if (!this.supports(mode)) {
      throw Refusal.noAcquirer('No live acquirer is configured on this platform; use a sandbox key');
    }
  }
}

function answerOf(row: { outcome: Recorded; voided_at: Date | null }): AcquirerResult {
  return acquirerResult(row.voided_at ? 'Denied' : row.outcome);
}
