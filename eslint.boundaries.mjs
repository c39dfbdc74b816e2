// The boundaries between the workspace packages, kept by `no-restricted-imports`:
// - a relative import never leaves its package: another package is imported by its name (@byrd/...);
// - a package is imported through its public entry (package.json "exports"), never its src/, dist/
//   or test/ folders;
// - no package's src imports a service (apps/*): services talk over HTTP and NATS, and only tests
//   start another service, through its public entry;
// - the hosted form's page (apps/*/web/src) loads only browser code: @byrd/contracts/browser.
import { readdirSync, readFileSync } from 'node:fs';

const CODE = '{ts,tsx,mts,cts,js,mjs,cjs}';
/** Deeper than any file of the repository (apps/payments/src/three-ds/sdk/x.ts is 4 folders in). */
const MAX_DEPTH = 10;

const { workspaces } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
/** Folders holding one package per subfolder (apps, libs), and packages that are a root folder. */
const GROUPS = workspaces.filter((glob) => glob.endsWith('/*')).map((glob) => glob.slice(0, -2));
const SINGLES = workspaces.filter((glob) => !glob.includes('*'));
const APPS = readdirSync(new URL('./apps/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

const OUT_OF_PACKAGE =
  'A relative import stays inside its own package: import another package by its name (@byrd/...) and public entry.';
const DEEP_IMPORT = {
  group: ['src', 'dist', 'test'].flatMap((folder) => [`@byrd/*/${folder}`, `@byrd/*/${folder}/**`]),
  message:
    'Import a workspace package through its public entry (its package.json "exports"), not its folders.',
};
const SERVICE = {
  group: APPS.map((app) => `@byrd/${app}`),
  message:
    "No package's code imports a service (services talk over HTTP and NATS); tests may start one through its public entry.",
};
const BROWSER = {
  paths: [
    { name: '@byrd/contracts', message: 'The page runs in a browser: import @byrd/contracts/browser.' },
  ],
  patterns: [
    { group: ['@byrd/platform', '@byrd/platform/**', 'node:*'], message: 'The page runs in a browser.' },
  ],
};

/**
 * The relative imports that leave a package, from a file `depth` folders inside it. For a package in a
 * group folder (apps/x), climbing depth + 1 levels lands among its siblings; climbing to the
 * repository root and into a workspace folder reaches another package (root files, such as
 * jest.base.mjs, may be named).
 */
function leavingPackage(depth, inGroup) {
  const up = (levels) => `^(\\.\\./){${levels}}`;
  const toRoot = depth + (inGroup ? 2 : 1);
  const intoWorkspace = `${up(toRoot)}(${[...GROUPS, ...SINGLES].join('|')})/`;
  return [
    ...(inGroup ? [{ regex: `${up(depth + 1)}(?!\\.\\./)`, message: OUT_OF_PACKAGE }] : []),
    { regex: intoWorkspace, message: OUT_OF_PACKAGE },
  ];
}

/**
 * Config blocks for every file of every package, one per folder depth (the patterns depend on it).
 * ESLint lets a later block replace a rule's options, so each block carries the whole list, and the
 * blocks for src/ and web/src/ come after the general one of their depth.
 */
export function boundaries() {
  const rule = (patterns, paths = []) => ({
    'no-restricted-imports': ['error', { paths, patterns: [DEEP_IMPORT, ...patterns] }],
  });
  const blocks = [];
  for (const [packages, inGroup] of [
    [`{${GROUPS.join(',')}}/*`, true],
    [`{${SINGLES.join(',')}}`, false],
  ]) {
    for (let depth = 0; depth <= MAX_DEPTH; depth += 1) {
      const leaving = leavingPackage(depth, inGroup);
      // The files `depth` folders inside a package, the first of those folders being `folders`.
      const at = (...folders) => [
        [packages, ...folders, ...Array(depth - folders.length).fill('*'), `*.${CODE}`].join('/'),
      ];
      blocks.push({ files: at(), rules: rule(leaving) });
      if (depth >= 1) blocks.push({ files: at('src'), rules: rule([...leaving, SERVICE]) });
      if (depth >= 2) {
        blocks.push({
          files: at('web', 'src'),
          rules: rule([...leaving, SERVICE, ...BROWSER.patterns], BROWSER.paths),
        });
      }
    }
  }
  return blocks;
}
