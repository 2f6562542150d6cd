import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * The import rules of .dependency-cruiser.cjs, run on a temporary copy of the config with
 * planted modules, so a change to the options (type-only imports dropped from the graph,
 * say) cannot silently turn a rule off.
 */
const repo = path.resolve(import.meta.dirname, '..');
const depcruise = path.join(repo, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');

let dir: string;
const write = (rel: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
};

const run = (...args: string[]) =>
  spawnSync(process.execPath, [depcruise, 'packages', '--config', '.dependency-cruiser.cjs', ...args], {
    cwd: dir,
    encoding: 'utf8',
  });

/** [rule, from, to] of each violation in the JSON report (that reporter always exits 0). */
function violations(): string[][] {
  const res = run('-T', 'json');
  if (res.stdout === '') throw new Error(`depcruise printed nothing: ${res.stderr}`);
  const report = JSON.parse(res.stdout) as {
    summary: { violations: { rule: { name: string }; from: string; to: string }[] };
  };
  return report.summary.violations.map((v) => [v.rule.name, v.from, v.to]).sort();
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-import-rules-'));
  fs.copyFileSync(path.join(repo, '.dependency-cruiser.cjs'), path.join(dir, '.dependency-cruiser.cjs'));
  for (const f of ['tsconfig.json', 'tsconfig.base.json']) fs.copyFileSync(path.join(repo, f), path.join(dir, f));
  write('packages/demo/src/leaf.ts', 'export type Id = string;\n');
  write('packages/demo/src/main.ts', "import type { Id } from './leaf.ts';\nexport const id: Id = 'a';\n");
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('import rules', () => {
  it('pass a tree without cycles or unresolvable imports', () => {
    expect(violations()).toEqual([]);
    expect(run().status).toBe(0);
  });

  it('report a cycle made only of type imports, and fail the lint command on it', () => {
    write('packages/demo/src/a.ts', "import type { B } from './b.ts';\nexport interface A { b?: B }\n");
    write('packages/demo/src/b.ts', "import type { A } from './a.ts';\nexport interface B { a?: A }\n");
    // One violation per cycle, named from whichever module the cruise met first.
    expect(violations().map(([rule, from, to]) => [rule, ...[from, to].sort()])).toEqual([
      ['no-circular', 'packages/demo/src/a.ts', 'packages/demo/src/b.ts'],
    ]);
    const lint = run();
    expect(lint.status).toBe(1); // the number of errors
    expect(lint.stdout).toContain('error no-circular: packages/demo/src/');
  });

  it('report a portal foundation that imports an area, and an area that imports the edge', () => {
    write('packages/portal/src/identity/rule.ts', 'export const rule = 1;\n');
    write(
      'packages/portal/src/config/index.ts',
      "import { rule } from '../identity/rule.ts';\nexport const c = rule;\n",
    );
    write('packages/portal/src/api/readyz/get.ts', 'export const route = 1;\n');
    write(
      'packages/portal/src/sessions/use.ts',
      "import { route } from '../api/readyz/get.ts';\nexport const u = route;\n",
    );
    write('packages/portal/src/app.ts', 'export const app = 1;\n');
    write('packages/portal/src/audit/use.ts', "import { app } from '../app.ts';\nexport const a = app;\n");
    // Allowed: an area using a foundation, the edge using an area.
    write('packages/portal/src/http/errors.ts', 'export const e = 1;\n');
    write('packages/portal/src/records/ok.ts', "import { e } from '../http/errors.ts';\nexport const ok = e;\n");
    write(
      'packages/portal/src/api/records/get.ts',
      "import { ok } from '../../records/ok.ts';\nexport const g = ok;\n",
    );
    expect(violations()).toEqual([
      ['portal-areas-below-edge', 'packages/portal/src/audit/use.ts', 'packages/portal/src/app.ts'],
      ['portal-areas-below-edge', 'packages/portal/src/sessions/use.ts', 'packages/portal/src/api/readyz/get.ts'],
      ['portal-foundations-below-areas', 'packages/portal/src/config/index.ts', 'packages/portal/src/identity/rule.ts'],
    ]);
  });

  it('report a client kit that imports the engine or the CLI, an engine that imports the CLI, a pipeline that imports the scanner', () => {
    const c = 'packages/client/src';
    write(`${c}/cli/output.ts`, 'export const out = 1;\n');
    write(`${c}/scanner/nmap.ts`, 'export const nmap = 1;\n');
    write(`${c}/pipeline/scoring.ts`, 'export const score = 1;\n');
    write(`${c}/kit/portal/client.ts`, "import { score } from '../../pipeline/scoring.ts';\nexport const k = score;\n");
    write(`${c}/kit/text/printable.ts`, "import { out } from '../../cli/output.ts';\nexport const p = out;\n");
    write(`${c}/report/html.ts`, "import { out } from '../cli/output.ts';\nexport const h = out;\n");
    write(`${c}/pipeline/vuln-enrich.ts`, "import { nmap } from '../scanner/nmap.ts';\nexport const v = nmap;\n");
    // Allowed: the kit within itself, the engine on the kit, the pipeline on a part below it, the CLI on all.
    write(`${c}/kit/config/settings.ts`, 'export const s = 1;\n');
    write(`${c}/kit/license/service.ts`, "import { s } from '../config/settings.ts';\nexport const l = s;\n");
    write(`${c}/cve-match/match.ts`, "import { s } from '../kit/config/settings.ts';\nexport const m = s;\n");
    write(`${c}/pipeline/findings.ts`, "import { m } from '../cve-match/match.ts';\nexport const f = m;\n");
    write(
      `${c}/cli/main.ts`,
      "import { nmap } from '../scanner/nmap.ts';\nimport { l } from '../kit/license/service.ts';\nexport const x = [nmap, l];\n",
    );
    expect(violations()).toEqual([
      ['client-engine-below-cli', `${c}/report/html.ts`, `${c}/cli/output.ts`],
      ['client-kit-at-the-bottom', `${c}/kit/portal/client.ts`, `${c}/pipeline/scoring.ts`],
      ['client-kit-at-the-bottom', `${c}/kit/text/printable.ts`, `${c}/cli/output.ts`],
      ['client-pipeline-below-scanner-and-cli', `${c}/pipeline/vuln-enrich.ts`, `${c}/scanner/nmap.ts`],
    ]);
  });

  it('report an agent module that imports the client by any name but @svc/client/kit', () => {
    // The workspace as npm links it: the root names the workspaces, node_modules/@svc/client is a link.
    write('package.json', JSON.stringify({ name: 'demo', private: true, workspaces: ['packages/*'] }));
    write(
      'packages/client/package.json',
      JSON.stringify({
        name: '@svc/client',
        type: 'module',
        exports: { './kit': './src/kit/index.ts', './engine': './src/engine/index.ts' },
      }),
    );
    write('packages/client/src/kit/index.ts', 'export const kit = 1;\n');
    write('packages/client/src/engine/index.ts', 'export const engine = 1;\n');
    fs.mkdirSync(path.join(dir, 'node_modules', '@svc'), { recursive: true });
    fs.symlinkSync('../../packages/client', path.join(dir, 'node_modules', '@svc', 'client'));
    write('packages/agent/src/daemon.ts', "import { kit } from '@svc/client/kit';\nexport const d = kit;\n");
    write(
      'packages/agent/src/system-info.ts',
      "import { engine } from '@svc/client/engine';\nexport const i = engine;\n",
    );
    expect(violations()).toEqual([
      ['agent-uses-the-kit', 'packages/agent/src/system-info.ts', 'packages/client/src/engine/index.ts'],
    ]);
  });

  it('report an import that resolves to nothing', () => {
    write('packages/demo/src/c.ts', "export { x } from './missing.ts';\n");
    expect(violations()).toEqual([['not-to-unresolvable', 'packages/demo/src/c.ts', './missing.ts']]);
  });
});
