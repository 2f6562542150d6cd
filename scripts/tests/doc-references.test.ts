import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  anchors,
  backtickPaths,
  citations,
  docReferences,
  markdownLinks,
  slug,
  withoutFences,
} from '../doc-references.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((f) => f !== '' && existsSync(path.join(ROOT, f)));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

const markdownFiles = tracked.filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')));
const SELF = 'scripts/tests/doc-references.test.ts';
const codeFiles = tracked.filter(
  (f) => f !== SELF && (/\.(ts|tsx|sh|css|ya?ml)$/.test(f) || /^packages\/[^/]+\/bin\//.test(f)),
);
/** Files that may not cite outside documents. Fixture data (MAC addresses and the like) is left out, its READMEs are not. */
const citingScope = tracked.filter(
  (f) =>
    (/\.(ts|tsx|md|json|sh|css|ya?ml)$/.test(f) || /^packages\/[^/]+\/bin\//.test(f)) &&
    !f.endsWith('package-lock.json') &&
    !(f.includes('/fixtures/') && !f.endsWith('.md')) &&
    f !== SELF,
);

/** Whether a repository path exists (a file or a folder), or is a build output git ignores. */
function resolves(rel: string): boolean {
  if (existsSync(path.join(ROOT, rel))) return true;
  return [rel, `${rel}/`].some((candidate) => {
    try {
      execFileSync('git', ['check-ignore', '-q', '--no-index', candidate], { cwd: ROOT });
      return true;
    } catch {
      return false;
    }
  });
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(rel: string): Set<string> {
  let set = anchorCache.get(rel);
  if (set === undefined) {
    set = anchors(read(rel));
    anchorCache.set(rel, set);
  }
  return set;
}

/** What is wrong with `target` (a path relative to `from`'s folder or the root, maybe with #anchor), or null. */
function problem(target: string, fromDir: string, self: string): string | null {
  const [file = '', anchor] = target.split('#');
  const rel = file === '' ? self : path.normalize(path.join(fromDir, decodeURIComponent(file)));
  if (rel.startsWith('..')) return `${target}: outside the repository`;
  if (!resolves(rel)) return `${target}: no such file`;
  if (anchor !== undefined && anchor !== '' && rel.endsWith('.md') && statSync(path.join(ROOT, rel)).isFile()) {
    if (!anchorsOf(rel).has(anchor)) return `${target}: no heading with anchor #${anchor} in ${rel}`;
  }
  return null;
}

describe('the checker functions', () => {
  it('finds relative links, not web addresses or links in code', () => {
    const md = 'See [a](docs/a.md#x), [b](https://x.org), `[c](d.md)`.\n```\n[e](f.md)\n```\n[g](../h.md "t")';
    expect(markdownLinks(md)).toEqual(['docs/a.md#x', '../h.md']);
  });

  it('finds repo paths in inline code, not placeholders, globs or package-relative paths', () => {
    const md = '`packages/portal/src/app.ts` `packages/*/tests` `src/x.ts` `docs/<a>.md` `bench/x.ts:12` `npm test`';
    expect(backtickPaths(md)).toEqual(['packages/portal/src/app.ts', 'bench/x.ts']);
  });

  it('makes GitHub anchors, numbering repeated headings, ignoring fenced lines', () => {
    expect(slug("Issue 16 (items 4, 5): the console's `fleet`")).toBe('issue-16-items-4-5-the-consoles-fleet');
    const md = '# A b\n## Webhooks\n```\n# not a heading\n```\n### Webhooks';
    expect([...anchors(md)]).toEqual(['a-b', 'webhooks', 'webhooks-1']);
    expect(withoutFences('x\n```\ny\n```\nz')).toBe('x\n\n\n\nz');
  });

  it('finds docs references in code comments', () => {
    expect(docReferences('// see docs/api.md#limits and docs/agent/commands.md.\n// mydocs/x.md')).toEqual([
      'docs/api.md#limits',
      'docs/agent/commands.md',
    ]);
  });

  it('flags every kind of outside citation and leaves ids, test data and identifiers alone', () => {
    const planted = [
      '// per SPEC "Limits"',
      '/** SPEC §4.2 */',
      ' * see DESIGN.md',
      '// (D12)',
      '// D17: ids per client',
      'the design D4 says',
      '# SPEC.md options',
      '(SCANNER-NOTES 7.1)',
      'in `/work/shared/x.md`',
    ];
    for (const line of planted) expect(citations(line), line).toHaveLength(1);
    const clean = [
      "upload('D9', key)",
      'const SPEC_TABLES = [];',
      'MAC 56:D3:41',
      'RFC 6749 section 5.2',
      'docs/api.md',
    ];
    for (const line of clean) expect(citations(line), line).toEqual([]);
  });
});

describe('references in the repository', () => {
  it('every link and repo path in README.md and docs/ resolves, anchors included', () => {
    const bad: string[] = [];
    for (const file of markdownFiles) {
      const text = read(file);
      const dir = path.dirname(file);
      for (const link of markdownLinks(text)) {
        const p = problem(link, dir, file);
        if (p !== null) bad.push(`${file}: ${p}`);
      }
      for (const named of backtickPaths(text)) {
        const p = problem(named, '.', file);
        if (p !== null) bad.push(`${file}: \`${p}\``);
      }
    }
    expect(bad).toEqual([]);
  });

  it('every docs/….md reference in code resolves, anchors included', () => {
    const bad: string[] = [];
    for (const file of codeFiles) {
      for (const ref of docReferences(read(file))) {
        const p = problem(ref, '.', file);
        if (p !== null) bad.push(`${file}: ${p}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('no file cites a document outside the repository', () => {
    const bad = citingScope.flatMap((file) => citations(read(file)).map((c) => `${file}:${c.line}: ${c.text}`));
    expect(bad).toEqual([]);
  });

  it('the topic index of docs/decisions.md links every section', () => {
    const text = read('docs/decisions.md');
    const [index = '', ...rest] = text.split(/^## (?!Topics$)/m);
    const linked = new Set([...index.matchAll(/\]\(#([\w-]+)\)/g)].map((m) => m[1]));
    const sections = withoutFences(rest.map((s) => `## ${s}`).join(''))
      .split('\n')
      .filter((l) => /^#{2,3} /.test(l))
      .map((l) => l.replace(/^#+ /, ''));
    const all = anchors(text);
    const missing = sections.filter((s) => ![...linked].some((a) => a === slug(s) || a?.startsWith(`${slug(s)}-`)));
    expect(missing).toEqual([]);
    for (const a of linked) expect(all.has(a ?? ''), `#${a}`).toBe(true);
  });
});
