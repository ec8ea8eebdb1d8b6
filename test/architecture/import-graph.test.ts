// Data flows one way (front door → api → access → engine client → worker → engine →
// backends), so imports point one way too: no module reaches itself through others, the
// engine and the backends never import the layers above them, and nothing in src/ imports
// from worker/ (the workers import src/, not the other way round). Type-only imports count:
// they tie the layers together as much as values do.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Each module's relative imports (import, import type, export … from, import()), as repository paths. */
function graph(): Map<string, string[]> {
  const files = [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'worker'))];
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]!);
    const targets = specs
      .map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')))
      .filter((t) => existsSync(t))
      .map((t) => relative(ROOT, t));
    edges.set(relative(ROOT, file), [...new Set(targets)]);
  }
  return edges;
}

/** Every cycle, each as the modules along it (found by depth-first search from each module). */
function cycles(edges: Map<string, string[]>): string[][] {
  const found = new Map<string, string[]>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') {
        const cycle = stack.slice(stack.indexOf(next));
        found.set([...cycle].sort().join(' '), [...cycle, next]);
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
  return [...found.values()];
}

describe('the import graph of src/ and worker/', () => {
  const edges = graph();

  it('has no cycles', () => {
    expect(cycles(edges).map((c) => c.join(' → '))).toEqual([]);
  });

  it('never imports worker/ from src/', () => {
    const up = [...edges].flatMap(([from, to]) => (from.startsWith('src/') ? to.filter((t) => t.startsWith('worker/')).map((t) => `${from} → ${t}`) : []));
    expect(up).toEqual([]);
  });

  it('keeps the engine and the backends below the api, access and front doors', () => {
    const above = /^src\/(api|access|front|cli|ops|upstream)\//;
    const up = [...edges].flatMap(([from, to]) => (/^src\/(engine|backends)\//.test(from) ? to.filter((t) => above.test(t)).map((t) => `${from} → ${t}`) : []));
    expect(up).toEqual([]);
  });

  it('keeps the backends below the engine', () => {
    const up = [...edges].flatMap(([from, to]) => (from.startsWith('src/backends/') ? to.filter((t) => t.startsWith('src/engine/') && !/^src\/engine\/(errors|protocol)\.ts$/.test(t)).map((t) => `${from} → ${t}`) : []));
    expect(up).toEqual([]);
  });
});
