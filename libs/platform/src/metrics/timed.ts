import type { Histogram } from 'prom-client';

/**
 * Runs `call`, observing its duration in `histogram` under `labels` plus `outcomeLabel`: what
 * `outcomeOf` says of its value, or what `failureOf` says of its error (rethrown).
 */
export async function timed<T, L extends string>(
  histogram: Histogram<L>,
  labels: Partial<Record<L, string>>,
  outcomeLabel: L,
  call: () => Promise<T>,
  outcomeOf: (value: T) => string,
  failureOf: (error: unknown) => string = () => 'exception',
): Promise<T> {
  const done = histogram.startTimer(labels);
  try {
    const value = await call();
    done({ [outcomeLabel]: outcomeOf(value) } as Partial<Record<L, string>>);
    return value;
  } catch (error) {
    done({ [outcomeLabel]: failureOf(error) } as Partial<Record<L, string>>);
    throw error;
  }
}
