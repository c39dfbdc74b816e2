/**
 * Column transformer of money columns: bigint minor units come back from pg as strings; they stay
 * far below 2^53, so a JS number is exact.
 */
export const minorUnits = {
  to: (value: number) => value,
  from: (value: string | null) => (value === null ? 0 : Number(value)),
};
