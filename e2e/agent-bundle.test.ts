import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../test-support/cli.ts';
import { untilValue as until } from '../test-support/wait.ts';

// bin/svcd runs the daemon from its one-file bundle (packages/client/dist/svcd.mjs) only while the
// files it was built from are unchanged, builds it again when one changed, and runs the sources
// when it cannot build. Each case works on its own copy of packages/client (node_modules and the
// protocol package are linked), so the repository's own bundle is never touched.

const run = promisify(execFile);
let tree = '';
let client = '';
let home = '';

beforeAll(async () => {
  tree = await fs.mkdtemp(path.join(os.tmpdir(), 'svcd-bundle-'));
  client = path.join(tree, 'packages', 'client');
  await fs.mkdir(client, { recursive: true });
  for (const part of ['bin', 'src', 'scripts', 'package.json'])
    await fs.cp(path.join(REPO, 'packages/client', part), path.join(client, part), { recursive: true });
  await fs.symlink(path.join(REPO, 'node_modules'), path.join(tree, 'node_modules'));
  await fs.symlink(path.join(REPO, 'packages/protocol'), path.join(tree, 'packages', 'protocol'));
  home = path.join(tree, 'home');
  await fs.mkdir(home);
});

afterAll(async () => {
  await fs.rm(tree, { recursive: true, force: true });
});

const svcd = (...args: string[]) =>
  run(path.join(client, 'bin/svcd'), args, { env: { PATH: process.env['PATH'], HOME: home } }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
const bundle = () => path.join(client, 'dist/svcd.mjs');

describe('svcd bundle', () => {
  it('is built on the first start, with the list of its inputs, and runs', async () => {
    const r = await svcd('--version');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const inputs = await fs.readFile(path.join(client, 'dist/svcd.inputs'), 'utf8');
    expect(inputs).toMatch(/^[0-9a-f]{64} {2}packages\/client\/src\/agent\/main\.ts$/m);
    expect(inputs).toMatch(/node_modules\/croner\//);
    const built = await fs.stat(bundle());
    // Unchanged inputs: the same bundle runs again, not rebuilt.
    expect((await svcd('--version')).code).toBe(0);
    expect((await fs.stat(bundle())).mtimeMs).toBe(built.mtimeMs);
  });

  it('is built again when one of its inputs changed, and runs the new code', async () => {
    const main = path.join(client, 'src/agent/main.ts');
    const source = await fs.readFile(main, 'utf8');
    await fs.writeFile(main, source.replace('Signals: SIGHUP reloads', 'Signals (rebuilt): SIGHUP reloads'));
    const r = await svcd('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Signals (rebuilt): SIGHUP reloads');
    expect(await fs.readFile(bundle(), 'utf8')).toContain('Signals (rebuilt)');
  });

  it('the running daemon is the bundle, in lite mode', async () => {
    const configs = path.join(tree, 'configs');
    await fs.mkdir(configs, { recursive: true });
    // A portal nobody listens on: the daemon keeps retrying, which is all this needs.
    await fs.writeFile(
      path.join(configs, 'p.conf'),
      `CONSULTATION_API_URL=http://127.0.0.1:9/api/upload\nSVC_API_KEY=svc_biz_${'ab'.repeat(32)}\n`,
      { mode: 0o600 },
    );
    const child = spawn(path.join(client, 'bin/svcd'), ['--config-dir', configs], {
      env: {
        PATH: process.env['PATH'],
        HOME: home,
        SVC_AGENT_ID: 'svcd_tbundle',
        SVC_AGENT_STATE_DIR: path.join(tree, 'state'),
      },
      stdio: 'ignore',
    });
    try {
      const argv = await until(async () => {
        const cmdline = await fs.readFile(`/proc/${child.pid}/cmdline`, 'utf8').catch(() => '');
        const args = cmdline.split('\0');
        return args.some((a) => a.endsWith('.mjs') || a.endsWith('.ts')) ? args : undefined;
      }, 'svcd to exec node');
      expect(argv).toContain(bundle());
      expect(argv).toContain('--lite-mode');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
    }
  });

  it('runs from the sources, saying why, when the bundle cannot be built', async () => {
    await fs.rm(path.join(client, 'dist'), { recursive: true });
    // A file where the build's directory goes: the build fails, as on a read-only checkout.
    await fs.writeFile(path.join(client, 'dist'), '');
    const r = await svcd('--version');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(r.stderr).toMatch(/^svcd: running from the TypeScript sources: the bundle could not be built: .*EEXIST/);
  });
});
