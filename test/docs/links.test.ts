// The README is the front page and docs/ holds the rest: every relative link in them
// (files, images and #anchors) must lead somewhere, and every page of docs/ must be linked
// from the README, or a newcomer never finds it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!.replace(/`/g, ''))));
}

function links(page: string): { target: string; line: number }[] {
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, (block) => block.replace(/[^\n]/g, ' '));
  const out: { target: string; line: number }[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^(https?:|mailto:)/.test(m[1]!)) continue;
    out.push({ target: m[1]!, line: text.slice(0, m.index).split('\n').length });
  }
  return out;
}

describe('the README and docs/', () => {
  it('keeps the README short: under 200 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThan(200);
  });

  it.each(PAGES)('%s links only to files and headings that exist', (page) => {
    const broken: string[] = [];
    for (const { target, line } of links(page)) {
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const file = path ? resolve(dirname(join(ROOT, page)), path) : join(ROOT, page);
      if (!existsSync(file)) broken.push(`${page}:${line} ${target} (no ${relative(ROOT, file)})`);
      else if (anchor && file.endsWith('.md') && !anchors(file).has(anchor)) broken.push(`${page}:${line} ${target} (no heading #${anchor})`);
    }
    expect(broken).toEqual([]);
  });

  it('links every page of docs/ from the README', () => {
    const linked = new Set(links('README.md').map((l) => l.target.split('#')[0]));
    expect(PAGES.filter((p) => p.startsWith('docs/') && !linked.has(p))).toEqual([]);
  });
});
