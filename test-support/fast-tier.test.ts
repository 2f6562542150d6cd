import { existsSync, globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import fast from '../vitest.fast.config.ts';

/**
 * The fast tier is chosen by file name: a test file that starts Chromium, spawns portal
 * processes or starts its own PostgreSQL ends in `.slow.test.ts`, and vitest.fast.config.ts
 * leaves those out. This check follows each fast file's imports through the test helpers (not
 * into the packages' sources, which every in-process portal test reaches) and fails when one of
 * them gets to a heavy module.
 */

const ROOT = path.resolve(import.meta.dirname, '..');

/** Modules whose import means the test starts something heavy. */
const HEAVY_MODULES = new Map([
  ['packages/portal/src/db/embedded.ts', 'starts its own PostgreSQL (or a portal process, which does)'],
  ['packages/client/tests/helpers/pty.ts', 'drives a terminal through tmux'],
]);
/** Bare imports that start something heavy when imported for values (not only types). */
const HEAVY_PACKAGES = new Map([
  ['playwright-core', 'starts Chromium'],
  ['@svc/portal/db/embedded', 'starts its own PostgreSQL'],
]);

/** The test kit's names (test-support/package.json): followed like relative imports. */
const KIT_EXPORTS: Record<string, string> = JSON.parse(
  readFileSync(path.join(ROOT, 'test-support/package.json'), 'utf8'),
).exports;

/** The repository path an import names when it is a file of the tree outside the packages' sources. */
function localTarget(file: string, spec: string): string | null {
  const kit = /^@svc\/test-support(\/.+)$/.exec(spec);
  if (kit) {
    const entry = KIT_EXPORTS[`.${kit[1]}`];
    return entry === undefined ? null : path.join('test-support', entry);
  }
  if (!spec.startsWith('.')) return null;
  return path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec));
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+'([^']+)'|import\('([^']+)'\)/g;

function valueImports(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    if (m[5]) {
      out.push(m[5]);
      continue;
    }
    if (m[2]) continue;
    const braces = /^\{([^}]*)\}$/.exec(m[3]!.trim());
    const names = braces
      ? braces[1]!
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : null;
    if (names && names.length > 0 && names.every((n) => n.startsWith('type '))) continue;
    out.push(m[4]!);
  }
  return out;
}

/** Why `file` is heavy (the chain of imports), or null. */
function heavyReason(file: string, seen = new Set<string>()): string | null {
  if (seen.has(file)) return null;
  seen.add(file);
  for (const spec of valueImports(file)) {
    const pkg = HEAVY_PACKAGES.get(spec);
    if (pkg) return `${file} imports ${spec}: ${pkg}`;
    const target = localTarget(file, spec);
    if (target === null) continue;
    const heavy = HEAVY_MODULES.get(target);
    if (heavy) return `${file} imports ${target}: ${heavy}`;
    // A path in a string of the test (a fixture's own import) is not an import of the test.
    if (/^packages\/[^/]+\/src\//.test(target) || !target.endsWith('.ts') || !existsSync(path.join(ROOT, target)))
      continue;
    const why = heavyReason(target, seen);
    if (why) return `${file} → ${why}`;
  }
  return null;
}

function fastFiles(): string[] {
  const include = fast.test?.include ?? [];
  const exclude = fast.test?.exclude ?? [];
  return globSync(include, { cwd: ROOT, exclude: (f) => exclude.some((p) => path.matchesGlob(f, p)) }).sort();
}

describe('the fast tier', () => {
  it('leaves out every test file named *.slow.test.ts and keeps the rest', () => {
    const files = fastFiles();
    expect(files.length).toBeGreaterThan(80);
    expect(files.filter((f) => f.endsWith('.slow.test.ts'))).toEqual([]);
    expect(files).toContain('test-support/fast-tier.test.ts');
  });

  it('holds no test file that starts Chromium, portal processes, its own PostgreSQL or tmux', () => {
    const offenders = fastFiles()
      .map((f) => heavyReason(f))
      .filter((why) => why !== null);
    expect(offenders, 'rename these to *.slow.test.ts').toEqual([]);
  });

  it('recognises the heavy files (the check can fail)', () => {
    expect(heavyReason('packages/web/tests/sign-in.slow.test.ts')).toMatch(/playwright-core/);
    expect(heavyReason('packages/portal/tests/lifecycle.slow.test.ts')).toMatch(/db\/embedded/);
    expect(heavyReason('packages/portal/tests/embedded-socket.slow.test.ts')).toMatch(/db\/embedded/);
    // Through the test kit's names: the browser helper, the portal-process starter.
    expect(heavyReason('packages/web/tests/fleet-browser.slow.test.ts')).toMatch(/test-support\/.*playwright-core/);
    expect(heavyReason('packages/client/tests/synthetic-progress.slow.test.ts')).toMatch(
      /helpers\/pty\.ts: drives a terminal/,
    );
  });
});
