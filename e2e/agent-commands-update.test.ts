import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_COMPILE_CACHE, REPO } from '@svc/test-support/cli';
import { finishedCommand, queueCommand } from './helpers/agent-admin.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { newAgentId, portalConf, writeConfigs, untilRegistered } from '@svc/test-support/svcd';

/**
 * `update` with real git: the agent runs from a clone of a local bare repository (the project's
 * files as they are now), the test publishes a release tag and a newer main there, and the admin
 * queues updates. HEAD advanced → reported, then re-executed in place; up to date → config reloaded.
 */

const fixture = usePortalWithKey({ tier: 'business' });
let dir: string;
let bare: string;
let install: string;
let publisher: string;
let daemon: ReturnType<typeof spawn> | undefined;
let output = '';
const BUILT = 'bundle built (packages/agent/dist/svcd.mjs)\n';

/**
 * Child processes run asynchronously: the portal answers from this very process, so a
 * synchronous git or build blocking it for seconds on a loaded machine would stall its
 * keep-alive timers behind the test's next request on a reused connection.
 */
const run = promisify(execFile);
const git = async (cwd: string, ...args: string[]): Promise<string> =>
  (
    await run('git', ['-c', 'user.name=Release', '-c', 'user.email=release@test.local', ...args], {
      cwd,
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, GIT_CONFIG_NOSYSTEM: '1' },
    })
  ).stdout.trim();

/**
 * Publishes a commit adding `file` on top of `base`, as `ref` (a tag or a branch) of the bare
 * repository; `edit` changes the daemon's own code in the same commit.
 */
async function publish(
  base: string,
  file: string,
  ref: string,
  edit?: { file: string; from: string; to: string },
): Promise<string> {
  await git(publisher, 'checkout', '--quiet', '--detach', base);
  fs.writeFileSync(path.join(publisher, file), `${file}\n`);
  await git(publisher, 'add', file);
  if (edit !== undefined) {
    const source = fs.readFileSync(path.join(publisher, edit.file), 'utf8');
    if (!source.includes(edit.from)) throw new Error(`${edit.file} has no ${edit.from}`);
    fs.writeFileSync(path.join(publisher, edit.file), source.replace(edit.from, edit.to));
    await git(publisher, 'add', edit.file);
  }
  await git(publisher, 'commit', '--quiet', '-m', `release ${file}`);
  const sha = await git(publisher, 'rev-parse', 'HEAD');
  if (ref.startsWith('v')) await git(publisher, 'tag', ref);
  await git(
    publisher,
    'push',
    '--quiet',
    'origin',
    ref.startsWith('v') ? `refs/tags/${ref}` : `HEAD:refs/heads/${ref}`,
  );
  return sha;
}

async function untilOutput(re: RegExp, count: number, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while ((output.match(new RegExp(re, 'g')) ?? []).length < count) {
    if (Date.now() > end) throw new Error(`no ${count}x ${re} from svcd within ${timeoutMs} ms:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-update-'));
  bare = path.join(dir, 'svc.git');
  install = path.join(dir, 'install');
  publisher = path.join(dir, 'publisher');
  // The project's tracked files as they are in this working tree, as the first commit of main.
  const files = (
    await run('git', ['ls-files', '-z'], { cwd: REPO, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  ).stdout
    .split('\0')
    .filter(Boolean);
  fs.mkdirSync(publisher);
  for (const f of files) {
    if (!fs.existsSync(path.join(REPO, f))) continue;
    fs.mkdirSync(path.dirname(path.join(publisher, f)), { recursive: true });
    fs.copyFileSync(path.join(REPO, f), path.join(publisher, f));
    fs.chmodSync(path.join(publisher, f), fs.statSync(path.join(REPO, f)).mode);
  }
  await git(dir, 'init', '--quiet', '--bare', '-b', 'main', bare);
  await git(publisher, 'init', '--quiet', '-b', 'main');
  await git(publisher, 'add', '-A');
  await git(publisher, 'commit', '--quiet', '-m', 'svc');
  await git(publisher, 'remote', 'add', 'origin', bare);
  await git(publisher, 'push', '--quiet', 'origin', 'main');
  await git(dir, 'clone', '--quiet', bare, install);
  // The install's dependencies: the ones this checkout has; its bundle built as the install step builds it.
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(install, 'node_modules'));
  await run(process.execPath, ['packages/agent/scripts/build-svcd.ts', '--quiet'], { cwd: install });
});

afterAll(async () => {
  if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon?.once('close', r));
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('update against a local bare git repository', () => {
  it('a new tag: fetched, checked out, reported, then re-executed in place; the same tag again only reloads', async () => {
    const home = path.join(dir, 'home');
    const configDir = path.join(home, 'configs');
    await writeConfigs(configDir, { 'a-portal.conf': portalConf(fixture.uploadUrl, fixture.key) });
    const agentId = newAgentId('update');
    daemon = spawn(path.join(install, 'packages/agent/bin/svcd'), ['--config-dir', configDir], {
      cwd: home,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: home,
        LANG: 'C.UTF-8',
        NODE_COMPILE_CACHE,
        SVC_AGENT_ID: agentId,
        SVC_AGENT_STATE_DIR: path.join(home, 'state'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    daemon.stdout?.setEncoding('utf8').on('data', (d: string) => (output += d));
    daemon.stderr?.setEncoding('utf8').on('data', (d: string) => (output += d));
    const pid = daemon.pid as number;
    await untilOutput(/msg="svcd started"/, 1);
    await untilRegistered(fixture.portal, agentId);
    const first = await git(install, 'rev-parse', 'HEAD');

    // The release changes the daemon's code: the restarted daemon runs it (`update` rebuilt the bundle;
    // the lockfile is the same, so no dependencies were installed).
    const tagged = await publish(first, 'RELEASE-9.9.9', 'v9.9.9', {
      file: 'packages/agent/src/daemon.ts',
      from: "this.log.info('svcd started', {",
      to: "this.log.info('svcd started', { release: 'v9.9.9',",
    });
    const update = await queueCommand(fixture.portal, agentId, 'update', { version: 'v9.9.9', branch: 'nowhere' });
    expect(await finishedCommand(fixture.portal, update)).toMatchObject({
      command: { status: 'completed' },
      result: { exit_code: 0, stdout: `updated ${first} -> ${tagged} (v9.9.9)\n${BUILT}restarting\n`, stderr: '' },
    });
    expect(await git(install, 'rev-parse', 'HEAD')).toBe(tagged);
    await untilOutput(/msg="svcd started"/, 2);
    expect(output).toContain('re-executing in place');
    expect(output.match(/msg="svcd started" release=v9\.9\.9 /g)).toHaveLength(1);
    expect(daemon.pid).toBe(pid);
    expect(daemon.exitCode).toBeNull();

    const again = await queueCommand(fixture.portal, agentId, 'update', { version: 'v9.9.9' });
    expect((await finishedCommand(fixture.portal, again)).result).toMatchObject({
      exit_code: 0,
      stdout: `already up to date at ${tagged} (v9.9.9); configuration reloaded\n`,
    });
    await untilOutput(/configuration reloaded/, 1);
    expect(output.match(/msg="svcd started"/g)).toHaveLength(2);

    // A newer main: checked out from the detached tag and fast-forwarded.
    const newer = await publish(tagged, 'RELEASE-10', 'main');
    const branch = await queueCommand(fixture.portal, agentId, 'update');
    expect((await finishedCommand(fixture.portal, branch)).result).toMatchObject({
      exit_code: 0,
      stdout: `updated ${tagged} -> ${newer} (main)\n${BUILT}restarting\n`,
    });
    expect(await git(install, 'rev-parse', 'HEAD')).toBe(newer);
    expect(await git(install, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
    await untilOutput(/msg="svcd started"/, 3);

    // A tag the repository does not have: git's refusal, reported failed; nothing moves.
    const missing = await queueCommand(fixture.portal, agentId, 'update', { version: 'v0.0.1' });
    const failed = await finishedCommand(fixture.portal, missing);
    expect(failed.command.status).toBe('failed');
    expect(failed.result?.exit_code).not.toBe(0);
    expect(failed.result?.stderr).toMatch(/^git fetch failed\n/);
    expect(await git(install, 'rev-parse', 'HEAD')).toBe(newer);
    expect(daemon.pid).toBe(pid);
  });
});

describe('update to a release that adds a dependency', () => {
  // Node 22.18 or later as `node`, as on an agent host (this machine's own is older: the project's pinned one).
  const PATH = `${path.join(REPO, 'node_modules', '.bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}`;
  const NPM_CACHE = path.join(os.homedir(), '.npm');
  const npm = (cwd: string, ...args: string[]) =>
    run('npm', [...args, '--no-audit', '--no-fund'], {
      cwd,
      encoding: 'utf8',
      env: { PATH, HOME: dir, npm_config_cache: NPM_CACHE },
    });
  let agent: ReturnType<typeof spawn> | undefined;
  let agentOutput = '';

  afterAll(async () => {
    if (agent && agent.exitCode === null && agent.signalCode === null) {
      agent.kill('SIGTERM');
      await new Promise((r) => agent?.once('close', r));
    }
  });

  it('its dependencies are installed (npm ci --omit=dev) and the bundle built before the restart; the new code runs with them', async () => {
    // An install as documented: a clone, `npm ci --omit=dev -w packages/agent` (which builds the bundle).
    const own = path.join(dir, 'install-deps');
    await git(dir, 'clone', '--quiet', bare, own);
    await npm(own, 'ci', '--omit=dev', '--workspace', 'packages/agent', '--prefer-offline');
    expect(fs.existsSync(path.join(own, 'packages/agent/dist/svcd.mjs'))).toBe(true);
    expect(fs.existsSync(path.join(own, 'node_modules/svc-probe'))).toBe(false);

    // The release: a local package (no registry involved), a dependency of the agent, used by the daemon.
    const base = await git(own, 'rev-parse', 'HEAD');
    await git(publisher, 'checkout', '--quiet', '--detach', base);
    const probe = path.join(publisher, 'vendor/svc-probe');
    fs.mkdirSync(probe, { recursive: true });
    fs.writeFileSync(
      path.join(probe, 'package.json'),
      `${JSON.stringify({ name: 'svc-probe', version: '1.0.0', type: 'module', exports: './index.js' })}\n`,
    );
    fs.writeFileSync(path.join(probe, 'index.js'), "export const probe = 'probe-1.0.0';\n");
    const manifest = path.join(publisher, 'packages/agent/package.json');
    const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { dependencies: Record<string, string> };
    pkg.dependencies['svc-probe'] = 'file:../../vendor/svc-probe';
    fs.writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
    await npm(publisher, 'install', '--package-lock-only', '--workspace', 'packages/agent', '--offline');
    const daemonTs = path.join(publisher, 'packages/agent/src/daemon.ts');
    const source = fs.readFileSync(daemonTs, 'utf8');
    fs.writeFileSync(
      daemonTs,
      `import { probe } from 'svc-probe';\n${source.replace("this.log.info('svcd started', {", "this.log.info('svcd started', { probe,")}`,
    );
    await git(publisher, 'add', '-A');
    await git(publisher, 'commit', '--quiet', '-m', 'release with svc-probe');
    const release = await git(publisher, 'rev-parse', 'HEAD');
    await git(publisher, 'push', '--quiet', 'origin', 'HEAD:refs/heads/deps');

    const home = path.join(dir, 'home-deps');
    const configDir = path.join(home, 'configs');
    await writeConfigs(configDir, { 'a-portal.conf': portalConf(fixture.uploadUrl, fixture.key) });
    const agentId = newAgentId('update-deps');
    agent = spawn(path.join(own, 'packages/agent/bin/svcd'), ['--config-dir', configDir], {
      cwd: home,
      env: {
        PATH,
        HOME: home,
        LANG: 'C.UTF-8',
        SVC_AGENT_ID: agentId,
        SVC_AGENT_STATE_DIR: path.join(home, 'state'),
        // The host's npm cache (the registry is only asked about what it lacks).
        npm_config_cache: NPM_CACHE,
        npm_config_prefer_offline: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    agent.stdout?.setEncoding('utf8').on('data', (d: string) => (agentOutput += d));
    agent.stderr?.setEncoding('utf8').on('data', (d: string) => (agentOutput += d));
    await untilRegistered(fixture.portal, agentId);

    const update = await queueCommand(fixture.portal, agentId, 'update', { branch: 'deps' });
    expect(await finishedCommand(fixture.portal, update)).toMatchObject({
      command: { status: 'completed' },
      result: {
        exit_code: 0,
        stdout: `updated ${base} -> ${release} (deps)\ndependencies installed (npm ci --omit=dev)\n${BUILT}restarting\n`,
        stderr: '',
      },
    });
    expect(fs.realpathSync(path.join(own, 'node_modules/svc-probe'))).toBe(path.join(own, 'vendor/svc-probe'));
    const end = Date.now() + 60_000;
    while (!/msg="svcd started" probe=probe-1\.0\.0 /.test(agentOutput)) {
      if (Date.now() > end || agent.exitCode !== null)
        throw new Error(`the new release did not start:\n${agentOutput}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(agentOutput.match(/msg="svcd started"/g)).toHaveLength(2);
  }, 180_000);
});
