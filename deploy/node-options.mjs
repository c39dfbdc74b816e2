// Node.js flags every service runs with, in every place that starts one: the image
// (docker/Dockerfile sets the same NODE_OPTIONS; a chart test keeps them equal), the chart
// (`nodeOptions`, plus the heap limit its memory limit implies), `npm start` (deploy/local/start.mjs),
// the benchmarks (bench/lib/stack.mjs) and the chaos run.
//
// --max-semi-space-size=32: a request path allocates a lot of short-lived objects (DTOs, rows,
// events); V8's default 16 MB young generation is collected so often under load that the collector
// showed up as the payments service's largest single cost. 32 MB semi-spaces (96 MB young
// generation at most) halve the number of scavenges for about 50 MB more resident memory under load.
export const SERVICE_NODE_OPTIONS = '--max-semi-space-size=32';

/** NODE_OPTIONS for a service: the caller's own (if any) first, then the services' flags. */
export function serviceNodeOptions(inherited = process.env.NODE_OPTIONS) {
  return [inherited, SERVICE_NODE_OPTIONS].filter(Boolean).join(' ');
}
