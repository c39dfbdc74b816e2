// Node.js flags and process settings every service runs with, in every place that starts one: the
// image (docker/Dockerfile sets the same NODE_OPTIONS and MALLOC_ARENA_MAX; a chart test keeps them
// equal), the chart (`nodeOptions`, plus the heap limit its memory limit implies), `npm start`
// (deploy/local/start.mjs), the benchmarks (bench/core/stack.ts) and the chaos run (chaos/lib).
//
// --max-semi-space-size=16: two 16 MB semi-spaces of young generation. 32 MB ones (tried to scavenge
// less often) kept 64 MB of the payments service's peak RSS in the young generation for a GC share
// the benchmark could not tell apart from 16 MB's within its noise (issue 17's memory goal: < 200 MB).
export const SERVICE_NODE_OPTIONS = '--max-semi-space-size=16';

/**
 * glibc's malloc keeps up to 8 arenas per core: threads that allocate at the same time (libuv's
 * pool, V8's GC helpers) get arenas of their own, and each holds on to its freed pages. Two arenas
 * took 6–10 MB off the webhook service's peak RSS (189.5–193.3 MB against 198.6–200.1, three runs of
 * `npm run bench -- webhooks` each) at the same CPU per delivery (issue 17's memory goal: < 200 MB).
 * The image is Debian's (glibc); elsewhere (musl, macOS) the variable does nothing.
 */
export const SERVICE_MALLOC_ARENA_MAX = '2';

/** The young generation the chart sets aside for those flags (three semi-spaces' worth). */
export const YOUNG_GENERATION_MIB = 48;

/** The memory limit the chart gives a service by default (values.yaml, serviceDefaults.resources). */
export const DEFAULT_MEMORY_LIMIT_MIB = 512;

/**
 * V8's old-space limit for a container memory limit, the chart's rule (byrd.oldSpaceMiB; a chart
 * test keeps both equal): 3/4 of the limit less the young generation, at least 64 MiB. Any explicit
 * limit also makes V8 grow the heap by about 1.3× its live size instead of up to 4× (its factor for
 * a machine with gigabytes free), so garbage is collected long before the limit.
 */
export function oldSpaceMiB(limitMiB) {
  return Math.max(64, Math.floor(limitMiB * 0.75) - YOUNG_GENERATION_MIB);
}

/**
 * NODE_OPTIONS for a service: the caller's own (if any) first, then the services' flags and the heap
 * limit of the chart's default memory limit, so `npm start`, the benchmarks and the chaos run hold
 * their heaps as a pod does.
 */
export function serviceNodeOptions(
  inherited = process.env.NODE_OPTIONS,
  limitMiB = DEFAULT_MEMORY_LIMIT_MIB,
) {
  return [inherited, SERVICE_NODE_OPTIONS, `--max-old-space-size=${oldSpaceMiB(limitMiB)}`]
    .filter(Boolean)
    .join(' ');
}

/**
 * The environment a service process gets beside its own configuration: NODE_OPTIONS as above and
 * glibc's MALLOC_ARENA_MAX, as the image sets them.
 */
export function serviceProcessEnv(inherited = process.env.NODE_OPTIONS, limitMiB = DEFAULT_MEMORY_LIMIT_MIB) {
  return {
    NODE_OPTIONS: serviceNodeOptions(inherited, limitMiB),
    MALLOC_ARENA_MAX: SERVICE_MALLOC_ARENA_MAX,
  };
}
