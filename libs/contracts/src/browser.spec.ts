import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = path.dirname(fileURLToPath(import.meta.url));
// Static imports and re-exports that reach the bundle (`import type` / `export type` do not).
const RUNTIME_IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;

/** Every module `entry` loads at run time, followed through relative imports, and the packages they import. */
function runtimeGraph(entry: string): { modules: string[]; packages: string[] } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (modules.has(file)) return;
    modules.add(file);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(RUNTIME_IMPORT)) {
      if (specifier.startsWith('.'))
        visit(path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts')));
      else packages.add(specifier);
    }
  };
  visit(path.join(SRC, entry));
  return { modules: [...modules].map((file) => path.relative(SRC, file)).sort(), packages: [...packages] };
}

describe('@byrd/contracts/browser', () => {
  it('loads no package at run time (no node:*, class-validator or swagger in the page)', () => {
    const graph = runtimeGraph('browser.ts');
    expect(graph.packages).toEqual([]);
    expect(graph.modules).toEqual([
      'browser.ts',
      'card-expiry.ts',
      'enums.ts',
      'hosted-form-configs.ts',
      'ids.ts',
      'phone.ts',
    ]);
  });

  it('would see a package import in a module the entry loads', () => {
    expect(runtimeGraph('index.ts').packages).toEqual(
      expect.arrayContaining(['class-validator', '@nestjs/swagger', 'node:crypto']),
    );
  });
});
