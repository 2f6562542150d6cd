import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '@svc/test-support/cli';
import { untilValue as until } from '@svc/test-support/wait';

// bin/svcd runs the daemon from its one-file bundle (packages/agent/dist/svcd.mjs), which the
// install (`npm ci`) and the `update` command build; it never builds at start. The cases work on
// their own copy of packages/agent (node_modules and the other packages are linked), so the
// repository's own bundle is never touched.

const run = promisify(execFile);
let tree = '';
let agent = '';
let home = '';

beforeAll(async () => {
  tree = await fs.mkdtemp(path.join(os.tmpdir(), 'svcd-bundle-'));
  agent = path.join(tree, 'packages', 'agent');
  await fs.mkdir(agent, { recursive: true });
  for (const part of ['bin', 'src', 'scripts', 'package.json'])
    await fs.cp(path.join(REPO, 'packages/agent', part), path.join(agent, part), { recursive: true });
  await fs.symlink(path.join(REPO, 'node_modules'), path.join(tree, 'node_modules'));
  for (const pkg of ['client', 'protocol'])
    await fs.symlink(path.join(REPO, 'packages', pkg), path.join(tree, 'packages', pkg));
  home = path.join(tree, 'home');
  await fs.mkdir(home);
});

afterAll(async () => {
  await fs.rm(tree, { recursive: true, force: true });
});

const svcd = (...args: string[]) =>
  run(path.join(agent, 'bin/svcd'), args, { env: { PATH: process.env['PATH'], HOME: home } }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
const bundle = () => path.join(agent, 'dist/svcd.mjs');
// The build as the install runs it: the agent package's postinstall, with the test's Node.
const build = () => run(process.execPath, [path.join(agent, 'scripts/build-svcd.ts'), '--quiet'], { cwd: agent });

describe('svcd bundle', () => {
  it('missing: svcd does not build it, it says which command does (exit 2)', async () => {
    const r = await svcd('--version');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toBe(
      `svcd: the daemon's bundle ${bundle()} is missing: build it with \`npm run build:agent\` in ${tree} (\`npm ci\` builds it too)\n`,
    );
    await expect(fs.stat(path.join(agent, 'dist'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('built by the install step, then run as it is: an edited source does not rebuild it at start', async () => {
    await build();
    const r = await svcd('--version');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const built = await fs.stat(bundle());
    const main = path.join(agent, 'src/main.ts');
    const source = await fs.readFile(main, 'utf8');
    await fs.writeFile(main, source.replace('Signals: SIGHUP reloads', 'Signals (rebuilt): SIGHUP reloads'));
    const before = await svcd('--help');
    expect(before.code).toBe(0);
    expect(before.stdout).toContain('Signals: SIGHUP reloads');
    expect((await fs.stat(bundle())).mtimeMs).toBe(built.mtimeMs);
    // The next build (an install or an update) carries the change.
    await build();
    expect((await svcd('--help')).stdout).toContain('Signals (rebuilt): SIGHUP reloads');
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
    const child = spawn(path.join(agent, 'bin/svcd'), ['--config-dir', configs], {
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
});
