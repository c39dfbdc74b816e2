// Output: compact aligned tables, goal lines, and the JSON result file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { RESULTS_DIR, ROOT, paint, timestamp } from './util.mjs';

/**
 * Renders rows as an aligned text table. `columns`: [{ title, value: (row) => string|number, align }]
 * (numbers are right-aligned unless align says otherwise).
 */
export function table(rows, columns) {
  const cells = rows.map((row) => columns.map((column) => format(column.value(row))));
  const widths = columns.map((column, i) =>
    Math.max(column.title.length, ...cells.map((line) => line[i].length)),
  );
  const alignOf = (column, i) => column.align ?? (i === 0 ? 'left' : 'right');
  const render = (line) =>
    line
      .map((cell, i) =>
        alignOf(columns[i], i) === 'left' ? cell.padEnd(widths[i]) : cell.padStart(widths[i]),
      )
      .join('  ')
      .trimEnd();
  return [
    render(columns.map((c) => c.title)),
    render(widths.map((w) => '-'.repeat(w))),
    ...cells.map(render),
  ].join('\n');
}

function format(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return '-';
  if (typeof value === 'number') {
    if (Number.isInteger(value)) return String(value);
    return Math.abs(value) >= 100
      ? value.toFixed(0)
      : Math.abs(value) >= 10
        ? value.toFixed(1)
        : value.toFixed(2);
  }
  return String(value);
}

/** One goal: { name, actual, target, pass (null: not evaluated) } printed as `PASS`/`MISS` (a benchmark reports; it never fails CI). */
/** Issue 17's memory goal, for every service: peak RSS (VmHWM) below this. */
export const GOAL_SERVICE_RSS_MB = 200;

export function goalLine({ name, actual, target, pass }) {
  const verdict = pass === null ? paint('2', 'n/a ') : pass ? paint('1;32', 'PASS') : paint('1;33', 'MISS');
  return `${verdict}  ${name}: ${actual} (goal ${target})`;
}

/** Writes bench/results/<name>-<timestamp>.json; answers its path relative to the repo. */
export function writeResult(name, data, at = new Date()) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${name}-${timestamp(at)}.json`);
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return relative(ROOT, file);
}
