import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The layers of the sessions area, read from the source: routes hold no
 * SQL, the domain knows no HTTP, and the JSON API does not go through the share page's web/.
 */

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

function sources(dir: string): string[] {
  return fs
    .readdirSync(path.join(SRC, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => path.join(dir, f));
}
const read = (file: string) => fs.readFileSync(path.join(SRC, file), 'utf8');
const importsOf = (file: string) => [...read(file).matchAll(/from '([^']+)'/g)].map((m) => m[1]!);

const ROUTES = [
  'api/sessions',
  'api/share',
  'api/download',
  'api/refresh',
  'api/remediation-update',
  'api/upload',
  'api/benchmark',
].flatMap(sources);
const SQL = /\.(selectFrom|insertInto|updateTable|deleteFrom)\(|\bsql`|ctx\.db\b|pool\.query/;

describe('sessions layering', () => {
  it('the session routes and the share page run no SQL', () => {
    expect(ROUTES.length).toBeGreaterThan(10);
    expect([...ROUTES, ...sources('web')].filter((f) => SQL.test(read(f)))).toEqual([]);
  });

  it('sessions/ runs SQL only in its query modules', () => {
    const QUERY_MODULE = /(^|[-/])queries\.ts$/;
    const sessionSql = /\.(selectFrom|insertInto|updateTable|deleteFrom)\(|\bsql`|\.query\(/;
    const files = sources('sessions');
    expect(files.filter((f) => QUERY_MODULE.test(f))).toContain(path.join('sessions', 'queries.ts'));
    expect(files.filter((f) => !QUERY_MODULE.test(f) && sessionSql.test(read(f)))).toEqual([]);
  });

  it('sessions/ reads no request and throws no HTTP error: it imports neither fastify nor http/', () => {
    const offending = sources('sessions').flatMap((f) =>
      importsOf(f)
        .filter((i) => i === 'fastify' || i.startsWith('@fastify/') || i.includes('/http/'))
        .map((i) => `${f}: ${i}`),
    );
    expect(offending).toEqual([]);
  });

  it('/api/share and /api/download do not go through web/', () => {
    const viaWeb = [...sources('api/share'), ...sources('api/download')].filter((f) =>
      importsOf(f).some((i) => i.includes('/web/')),
    );
    expect(viaWeb).toEqual([]);
  });
});
