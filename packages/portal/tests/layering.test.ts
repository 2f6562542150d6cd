import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Read from the source itself: no import cycle between the business areas
 * (auth depends on identity, never the other way), no SQL in identity route files, and
 * credential headers read only by http/credentials.ts.
 */

const SRC = path.resolve(import.meta.dirname, '../src');
const AREAS = [
  'licenses',
  'sessions',
  'records',
  'agents',
  'webhooks',
  'audit',
  'identity',
  'auth',
  'operations',
  'web',
];

/** Every non-test .ts file under src, as a path relative to src with forward slashes. */
function sourceFiles(): string[] {
  return (fs.readdirSync(SRC, { recursive: true }) as string[])
    .map((f) => f.split(path.sep).join('/'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .sort();
}

const read = (file: string) => fs.readFileSync(path.join(SRC, file), 'utf8');

/** Relative specifiers of `import ... from`, `export ... from`, `import '...'` and `import('...')`. */
function relativeImports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g))
    found.push(m[1] as string);
  return found;
}

const areaOf = (file: string): string | null => {
  const top = file.split('/')[0] as string;
  return AREAS.includes(top) ? top : null;
};

/** Area -> areas it imports, with one importing file named per edge. */
function areaGraph(files: string[]): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of files) {
    const from = areaOf(file);
    if (from === null) continue;
    for (const spec of relativeImports(read(file))) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      const to = areaOf(target);
      if (to === null || to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string>();
      if (!edges.has(to)) edges.set(to, `${file} -> ${target}`);
      graph.set(from, edges);
    }
  }
  return graph;
}

/** Every elementary cycle found by depth-first search, each as `a -> b -> a`, rotated to start at its smallest node. */
function cyclesOf(graph: Map<string, Iterable<string>>): string[] {
  const cycles = new Set<string>();
  const visit = (node: string, trail: string[]) => {
    for (const next of graph.get(node) ?? []) {
      const at = trail.indexOf(next);
      if (at >= 0) {
        const loop = trail.slice(at);
        const start = loop.indexOf([...loop].sort()[0] as string);
        const rotated = [...loop.slice(start), ...loop.slice(0, start)];
        cycles.add([...rotated, rotated[0]].join(' -> '));
      } else visit(next, [...trail, next]);
    }
  };
  for (const node of graph.keys()) visit(node, [node]);
  return [...cycles].sort();
}

describe('import graph', () => {
  it('reads every form of relative import and finds cycles', () => {
    const text = [
      "import { a } from '../auth/guards.ts';",
      "import type { B } from './b.ts';",
      "export { c } from '../c/index.ts';",
      "import './side-effect.ts';",
      "const d = await import('../d.ts');",
      "import { e } from '@svc/protocol';",
    ].join('\n');
    expect(relativeImports(text)).toEqual([
      '../auth/guards.ts',
      './b.ts',
      '../c/index.ts',
      './side-effect.ts',
      '../d.ts',
    ]);
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a', 'd']],
          ['d', []],
        ]),
      ),
    ).toEqual(['a -> b -> c -> a']);
    expect(cyclesOf(new Map([['a', ['b']]]))).toEqual([]);
  });

  it('has no cycle between the business areas', () => {
    const graph = areaGraph(sourceFiles());
    // The graph is really read: auth verifies the identity provider's tokens.
    expect(graph.get('auth')?.has('identity')).toBe(true);
    const named = new Map([...graph].map(([area, edges]) => [area, [...edges.keys()]]));
    const cycles = cyclesOf(named);
    const evidence = cycles.map((c) => {
      const nodes = c.split(' -> ');
      return nodes.slice(1).map((to, i) => graph.get(nodes[i] as string)?.get(to));
    });
    expect({ cycles, evidence }).toEqual({ cycles: [], evidence: [] });
  });

  it('keeps identity independent of auth: identity issues tokens, auth verifies them', () => {
    expect(areaGraph(sourceFiles()).get('identity')?.get('auth')).toBeUndefined();
  });
});

const SQL = [/\.selectFrom\(/, /\.insertInto\(/, /\.updateTable\(/, /\.deleteFrom\(/, /\bsql`/, /\bpool\.query\(/];
const withSql = (files: string[]) => files.filter((f) => SQL.some((re) => re.test(read(f))));

describe('route files', () => {
  it('finds SQL where there is some', () => {
    expect(withSql(['identity/queries.ts'])).toEqual(['identity/queries.ts']);
  });

  it('run no SQL in the identity routes: it lives in identity/queries.ts', () => {
    const routes = sourceFiles().filter((f) => f.startsWith('identity/routes/'));
    expect(routes.length).toBeGreaterThanOrEqual(9);
    expect(withSql(routes)).toEqual([]);
  });

  it('lay the identity routes out as <path>/<method>.ts, beside their index and guard', () => {
    const routes = sourceFiles().filter((f) => f.startsWith('identity/routes/'));
    const misplaced = routes.filter(
      (f) =>
        !/^identity\/routes\/[a-z-]+\/(get|post|put|patch|delete)\.ts$/.test(f) &&
        f !== 'identity/routes/index.ts' &&
        f !== 'identity/routes/bearer.ts',
    );
    expect(misplaced).toEqual([]);
  });
});

/** The method and URL of each route a file registers (`app.get('/x', …)`, `app.route({ method, url })`). */
function routesOf(text: string): { method: string; url: string }[] {
  const found: { method: string; url: string }[] = [];
  for (const m of text.matchAll(/\b(?:app|api|root)\.(get|post|put|patch|delete)\s*(?:<[^(]*>)?\(\s*'([^']*)'/g))
    found.push({ method: m[1] as string, url: m[2] as string });
  for (const m of text.matchAll(/\.route\(\{\s*method:\s*([^,]*),\s*url:\s*'([^']*)'/g))
    found.push({ method: (m[1] as string).trim(), url: m[2] as string });
  return found;
}

describe('the edge convention (docs/architecture.md)', () => {
  const files = sourceFiles().filter((f) => f.startsWith('api/') && f !== 'api/index.ts');

  it('reads the routes a file registers', () => {
    expect(routesOf("app.get<{ Querystring: Q }>(\n  '/webhooks/deliveries', {}, h);")).toEqual([
      { method: 'get', url: '/webhooks/deliveries' },
    ]);
  });

  it('names every route file by its URL path and its method', () => {
    const wrong: string[] = [];
    for (const file of files) {
      const routes = routesOf(read(file));
      const name = path.basename(file, '.ts');
      if (routes.length === 0) continue;
      if (name === 'other-methods') continue;
      const folder = path
        .dirname(file)
        .split('/')
        .slice(1)
        .filter((part) => !part.startsWith('by-'))
        .join('/');
      for (const { method, url } of routes) {
        const urlPath = url
          .split('/')
          .filter((part) => part !== '' && !part.startsWith(':'))
          .join('/');
        if (method !== name || urlPath !== folder) wrong.push(`${file}: ${method.toUpperCase()} ${url}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(files.filter((f) => routesOf(read(f)).length > 0).length).toBeGreaterThanOrEqual(55);
  });

  it('keeps what routes share in files that register nothing', () => {
    const helpersInRoutes = files.filter(
      (f) => /\/(get|post|put|patch|delete)\.ts$/.test(f) && /^export (?!default)/m.test(read(f)),
    );
    expect(helpersInRoutes).toEqual([]);
  });
});

describe('credentials', () => {
  it('are read from request headers only in http/credentials.ts (auth, identity, app)', () => {
    const HEADER_READS = [
      /headers\.authorization/,
      /headers\[\s*['"](authorization|x-api-key|x-identity-token)['"]\s*\]/i,
      /headers\[\s*(API_KEY_HEADER|IDENTITY_TOKEN_HEADER)\s*\]/,
    ];
    const files = sourceFiles().filter(
      (f) => f === 'app.ts' || f.startsWith('auth/') || f.startsWith('identity/') || f === 'http/credentials.ts',
    );
    const readers = files.filter((f) => HEADER_READS.some((re) => re.test(read(f))));
    expect(readers).toEqual(['http/credentials.ts']);
  });
});
