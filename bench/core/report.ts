// Output: compact aligned tables, what every result file says about its run, and the JSON file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { distTimes } from './build.js';
import { RESULTS_DIR, ROOT, gitState, round, target, timestamp } from './util.js';

type Cell = string | number | null | undefined;

/** A column of a table: its title, its cell for a row, and its alignment (numbers right by default). */
export interface Column<T> {
  title: string;
  value: (row: T) => Cell;
  align?: 'left' | 'right';
}

/**
 * Renders rows as an aligned text table. `columns`: [{ title, value: (row) => string|number, align }]
 * (numbers are right-aligned unless align says otherwise).
 */
export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((row) => columns.map((column) => format(column.value(row))));
  const widths = columns.map((column, i) =>
    Math.max(column.title.length, ...cells.map((line) => line[i].length)),
  );
  const alignOf = (column: Column<T>, i: number) => column.align ?? (i === 0 ? 'left' : 'right');
  const render = (line: string[]) =>
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

function format(value: Cell): string {
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

/** Issue 17's memory goal, for every service: peak RSS (VmHWM) below this. */
export const GOAL_SERVICE_RSS_MB = 200;

/** What every result file says about its run: when, on what machine, which code, which build. */
export function runMetadata(benchmark: string, startedAt: Date, busyBefore: number, requires: string[]) {
  return {
    benchmark,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: {
      cores: cpus().length,
      memoryGb: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      busyCoresBeforeRun: round(busyBefore, 2),
    },
    git: gitState(),
    builds: distTimes(requires),
    target: target.root === ROOT ? 'working tree' : target.root,
  };
}

/** Writes bench/results/<name>-<timestamp>.json; answers its path relative to the repo. */
export function writeResult(name: string, data: unknown, at = new Date()): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${name}-${timestamp(at)}.json`);
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return relative(ROOT, file);
}
