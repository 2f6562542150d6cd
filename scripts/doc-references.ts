/**
 * Checks that what the documents and comments name is in the repository: links and repo paths in
 * markdown resolve (anchors included), `docs/….md` references in code resolve, and nothing cites
 * a document outside the repository (the old specification, design and scanner notes, their
 * section signs and decision ids). Pure functions over text; scripts/tests/doc-references.test.ts runs them
 * over the tracked files.
 */

/** Top-level folders whose paths, named in backticks, must exist. */
const REPO_DIRS = ['packages', 'docs', 'scripts', 'tools', 'bench', 'e2e', 'test-support'];

/** Markdown without its fenced code blocks (their lines are neither links nor headings). */
export function withoutFences(markdown: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const m = /^\s*(```+|~~~+)/.exec(line);
    if (m?.[1] !== undefined) {
      if (fence === null) fence = m[1].slice(0, 3);
      else if (m[1].startsWith(fence)) fence = null;
      out.push('');
      continue;
    }
    out.push(fence === null ? line : '');
  }
  return out.join('\n');
}

/** GitHub's anchor for a heading text: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a markdown document has, numbered like GitHub for repeated headings. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutFences(markdown).split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (m?.[1] === undefined) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Link targets of a markdown document that point into the repository (not web addresses). */
export function markdownLinks(markdown: string): string[] {
  const text = withoutFences(markdown).replace(/`[^`\n]*`/g, '');
  const out: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1] ?? '';
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    out.push(target);
  }
  return out;
}

/** Repository paths named in inline code: `packages/…`, `docs/…` and the other top folders. */
export function backtickPaths(markdown: string): string[] {
  const out: string[] = [];
  for (const m of withoutFences(markdown).matchAll(/`([^`\n]+)`/g)) {
    const code = (m[1] ?? '').trim();
    const top = code.split('/')[0] ?? '';
    if (!code.includes('/') || !REPO_DIRS.includes(top)) continue;
    if (/[\s*<>{}[\]$|,]|\.\.\./.test(code)) continue;
    out.push(code.replace(/:\d+$/, '').replace(/#.*$/, ''));
  }
  return out;
}

/** `docs/….md` references (with their anchor, if any) in source text. */
export function docReferences(source: string): string[] {
  return [...source.matchAll(/(?<![\w./-])docs\/[\w./-]*?\.md(?:#[\w-]+)?/g)].map((m) => m[0]);
}

/** Lines citing a document outside the repository: its file names, its section signs, decision ids. */
export function citations(text: string): { line: number; text: string }[] {
  const rules = [
    /\bSPEC\.md\b|\bDESIGN\.md\b|\bSCANNER-NOTES\b|\/work\/shared\//,
    /\bSPEC\b(?!_)/,
    /\bDESIGN\b(?!_)/,
    /§\s*\d/,
    /(?<![\w'"`:#/.-])D\d{1,3}\b(?![\w'"`-])/,
  ];
  const out: { line: number; text: string }[] = [];
  text.split('\n').forEach((line, i) => {
    if (rules.some((r) => r.test(line))) out.push({ line: i + 1, text: line.trim() });
  });
  return out;
}
