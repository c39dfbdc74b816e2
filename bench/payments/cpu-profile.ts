// Summarises a V8 .cpuprofile (node --cpu-prof): self time by package and the hottest functions,
// optionally only inside given time windows (process.hrtime microseconds, the profile's own clock:
// both are CLOCK_MONOTONIC on Linux), so start-up and idle time do not blur the picture.
import { readFileSync } from 'node:fs';

interface CallFrame {
  url: string;
  functionName: string;
  lineNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Share {
  name: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  busyMs: number;
  windowed: boolean;
  byPackage: Share[];
  topFunctions: (Share & { where: string })[];
}

/** Layers of a request path: [name, does this package belong to it]; the first match wins. */
export type Layers = [string, (pkg: string) => boolean][];

const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String']);

function packageOf({ url, functionName }: CallFrame): string {
  if (functionName === '(garbage collector)') return '(garbage collector)';
  if (!url && SOCKET_WRITES.has(functionName)) return '(socket writes)';
  if (!url) return '(native, program)';
  if (url.startsWith('node:')) return 'node core';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1];
  const workspace = /\/(libs|apps)\/([^/]+)\//.exec(url);
  if (workspace) return workspace[1] === 'libs' ? `@byrd/${workspace[2]}` : `apps/${workspace[2]}`;
  return url.replace(/^file:\/\//, '');
}

/**
 * Groups a summary's packages into layers: `layers` is [[layerName, (packageName) => boolean], ...];
 * the first match wins, the rest goes to "other".
 */
export function byLayer(summary: ProfileSummary, layers: Layers): Share[] {
  const totals = new Map<string, { ms: number; share: number }>();
  for (const { name, ms, share } of summary.byPackage) {
    const layer = layers.find(([, matches]) => matches(name))?.[0] ?? 'other';
    const current = totals.get(layer) ?? { ms: 0, share: 0 };
    totals.set(layer, { ms: current.ms + ms, share: current.share + share });
  }
  return [...totals].sort((a, b) => b[1].ms - a[1].ms).map(([name, v]) => ({ name, ...v }));
}

/** Self time of a .cpuprofile by package and function, within `windows` when given. */
export function summariseProfile(
  file: string,
  windows: { startUs: number; endUs: number }[] = [],
): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  // Sample i was taken at times[i]; it stands for the time until the next sample.
  const times: number[] = [];
  let time = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((time += delta));
  const inWindow = (t: number) => windows.some((w) => t >= w.startUs && t <= w.endUs);
  const windowed = windows.length > 0 && times.some(inWindow);
  for (let i = 0; i < profile.samples.length; i++) {
    if (windowed && !inWindow(times[i])) continue;
    const lasted = i + 1 < times.length ? times[i + 1] - times[i] : 0;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + Math.max(0, lasted));
  }
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const { callFrame } = nodes.get(id)!;
    if (callFrame.functionName === '(idle)') continue;
    busyUs += us;
    const pkg = packageOf(callFrame);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
    const where = callFrame.url
      ? `${callFrame.url.replace(/^.*?(node_modules\/|libs\/|apps\/)/, '$1')}:${callFrame.lineNumber + 1}`
      : '';
    const key = `${callFrame.functionName || '(anonymous)'}|${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  const share = (us: number) => (busyUs > 0 ? us / busyUs : 0);
  return {
    busyMs: busyUs / 1000,
    windowed,
    byPackage: [...byPackage]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ name, ms: us / 1000, share: share(us) })),
    topFunctions: [...byFunction]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([key, us]) => {
        const [name, where] = key.split('|');
        return { name, where, ms: us / 1000, share: share(us) };
      }),
  };
}
