// What a benchmark is to the dispatcher (bench/run.ts): its options, the dist files it runs, and run().
export interface OptionSpec {
  type: 'string' | 'boolean';
  default?: string | boolean;
  multiple?: boolean;
  short?: string;
  help: string;
}

export type Options = Record<string, OptionSpec>;

/** Parsed command-line values (node:util parseArgs). */
export type Args = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Scenario {
  options: Options;
  /** The dist files it runs (checked, and built when missing, before it runs). */
  requires(): string[];
  run(args: Args): Promise<unknown>;
}

/** A string option's value ('' when absent). */
export const text = (args: Args, name: string): string => (typeof args[name] === 'string' ? args[name] : '');

/** A boolean option's value. */
export const flag = (args: Args, name: string): boolean => args[name] === true;

/** A repeatable string option's values. */
export const list = (args: Args, name: string): string[] => {
  const value = args[name];
  return (Array.isArray(value) ? value : [value]).filter((item) => typeof item === 'string');
};

/** Options every benchmark that measures phases takes. */
export const PHASE_OPTIONS: Options = {
  'quiet-wait': {
    type: 'string',
    default: '30',
    help: 'before each phase, wait up to this many seconds for other work on the machine to stop',
  },
  'keep-logs': { type: 'boolean', default: false, help: "keep the processes' logs (always kept on failure)" },
};
