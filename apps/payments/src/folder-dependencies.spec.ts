import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * Payments' feature folders depend on each other one way only (payments → three-ds-server,
 * three-ds → payments, payments → async → payments-core, ...): a cycle between two folders means
 * neither can be read, moved or tested without the other. A root file (app.module.ts, config.ts)
 * counts as a folder of its own.
 */
const SRC = path.dirname(fileURLToPath(import.meta.url));

interface Edge {
  from: string;
  to: string;
  file: string;
  specifier: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [full] : [];
  });
}

/** The top folder under src/ a file sits in, or the file itself for a root file. */
function unitOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0];
}

function folderEdges(): Edge[] {
  return sourceFiles(SRC).flatMap((file) =>
    ts
      .preProcessFile(readFileSync(file, 'utf8'), true, true)
      .importedFiles.map((imported) => imported.fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => ({
        from: unitOf(file),
        to: unitOf(path.resolve(path.dirname(file), specifier)),
        file: path.relative(SRC, file),
        specifier,
      }))
      .filter((edge) => edge.from !== edge.to),
  );
}

/** Strongly connected groups of more than one folder (Tarjan): each is at least one cycle. */
function cycles(edges: Edge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) next.set(from, (next.get(from) ?? new Set()).add(to));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const node of next.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('payments folder dependencies', () => {
  it('has no cycle between folders', () => {
    const edges = folderEdges();
    const explained = cycles(edges).map((group) =>
      [
        group.join(' <-> '),
        ...edges
          .filter((e) => group.includes(e.from) && group.includes(e.to))
          .map((e) => `  ${e.file} imports ${e.specifier}`),
      ].join('\n'),
    );
    expect(explained).toEqual([]);
  });

  it('sees the imports between folders (the check above has something to check)', () => {
    const edges = folderEdges();
    expect(edges).toContainEqual(
      expect.objectContaining({
        from: 'payments',
        to: 'payments-core',
        file: 'payments/payment-authorizer.ts',
      }),
    );
    const backwards = { from: 'payments-core', to: 'payments', file: 'x.ts', specifier: '../payments/x.js' };
    expect(cycles([...edges, backwards])).toEqual([expect.arrayContaining(['payments', 'payments-core'])]);
  });
});
