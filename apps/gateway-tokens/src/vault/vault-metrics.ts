import { Injectable } from '@nestjs/common';
import { Histogram } from 'prom-client';
import { ApiError, ErrorKind, ServiceMetrics, timed } from '@byrd/platform';

export type VaultOperation = 'tokenize' | 'detokenize' | 'delete';

/**
 * The vault's operations on `GET /metrics` (`vault_operation_duration_seconds`), whether they came
 * over HTTP or RPC: tokenize (stored a new card, or refreshed the token of a known one), detokenize
 * (the card behind a token, for payments) and delete, with not_found and error apart.
 */
@Injectable()
export class VaultMetrics {
  private readonly operations = new Histogram({
    name: 'vault_operation_duration_seconds',
    help: 'Vault operations (tokenize, detokenize, delete) by result (stored, refreshed, ok, not_found, error) and duration',
    labelNames: ['operation', 'result'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.service.registry],
  });

  constructor(private readonly service: ServiceMetrics) {}

  measure<T>(
    operation: VaultOperation,
    run: () => Promise<T>,
    resultOf: (value: T) => string = () => 'ok',
  ): Promise<T> {
    return timed(this.operations, { operation }, 'result', run, resultOf, (error) =>
      error instanceof ApiError && error.kind === ErrorKind.NotFound ? 'not_found' : 'error',
    );
  }
}
