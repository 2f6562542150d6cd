import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EXIT_CANCELLED, MAX_OUTPUT_BYTES } from '@svc/protocol';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { startTimeOf, treeOf } from '@svc/client/kit';
import { executeCommand } from '../src/commands/dispatch.ts';
import { type CommandContext, jsonAnswer } from '../src/commands/outcome.ts';
import { reportOutput, stripAnsi } from '../src/commands/output.ts';
import { scanArgs } from '../src/commands/scan-commands.ts';
import { installSteps, NO_GIT_DIRECTORY, updateSteps } from '../src/commands/self-update.ts';
import { runProcess } from '../src/commands/spawn.ts';
import type { CommandHost, ScheduleChange } from '../src/types.ts';

const command = (command_type: string, payload: Record<string, unknown>) =>
  ({
    id: 7,
    command_type,
    payload,
    priority: 0,
    created_by: 'admin@test.local',
    created_at: new Date().toISOString(),
  }) as Parameters<typeof executeCommand>[0];

interface Calls {
  config: [string, string][];
  levels: string[];
  schedules: [string, string, ScheduleChange][];
}

function hostFor(calls: Calls, over: Partial<CommandHost> = {}): CommandHost {
  const quiet = () => undefined;
  return {
    agentId: 'svcd_test0001',
    stateDir: '/nonexistent',
    portal: undefined as never,
    portalOrigin: 'http://127.0.0.1:1',
    commandTimeoutMs: 5000,
    scanTimeoutMs: 5000,
    sessionsRoot: '/nonexistent',
    svcCommand: ['/bin/false'],
    childEnv: process.env,
    log: { debug: quiet, info: quiet, warning: quiet, error: quiet },
    schedules: {
      has: (id) => id === 'nightly',
      apply: (id, action, change) => {
        if (change.cron === '0 0 31 2 *') throw new Error('that day never comes');
        calls.schedules.push([id, action, change]);
        return `schedule ${id}: ${action}`;
      },
    },
    applyConfig: (k, v) => calls.config.push([k, v]),
    setLogLevel: (l) => calls.levels.push(l),
    restart: quiet,
    reload: quiet,
    shutdown: quiet,
    stopping: () => false,
    install: { kind: 'image' },
    ...over,
  };
}

/** A deadline no test here means to reach: only the deadline test below sets one that passes. */
const far = () => Date.now() + 10 * 60_000;
const ctxFor = (host: CommandHost): CommandContext => ({ host, deadline: far(), onChild: () => undefined });

describe('report output', () => {
  it('strips ANSI escapes (CSI, OSC, two-byte) and NUL', () => {
    expect(stripAnsi('\u001b[1;31mred\u001b[0m \u001b]0;title\u0007ok\u001b(B\u0000!')).toBe('red ok!');
  });

  it('keeps at most 10 KB of UTF-8, never splitting a character', () => {
    expect(reportOutput('a'.repeat(MAX_OUTPUT_BYTES + 5))).toHaveLength(MAX_OUTPUT_BYTES);
    const euros = reportOutput('€'.repeat(MAX_OUTPUT_BYTES));
    expect(Buffer.byteLength(euros)).toBe(MAX_OUTPUT_BYTES - (MAX_OUTPUT_BYTES % 3));
    expect(euros).toBe('€'.repeat(Math.floor(MAX_OUTPUT_BYTES / 3)));
    // Escapes are stripped before the cut: they take no room.
    expect(reportOutput(`\u001b[31m${'b'.repeat(MAX_OUTPUT_BYTES)}`)).toBe('b'.repeat(MAX_OUTPUT_BYTES));
  });
});

describe('run_scan arguments', () => {
  const root = '/var/lib/svc/sessions';
  it.each([
    [undefined, ['--full']],
    ['full_recon', ['--full']],
    ['full', ['--full']],
    ['quick', ['-P', 'quick_recon']],
    ['quick_recon', ['-P', 'quick_recon']],
    ['discovery', []],
  ])('profile %s adds %j', (profile, mode) => {
    expect(scanArgs({ targets: '10.0.0.1,10.0.0.0/28', ...(profile ? { profile } : {}) }, root)).toEqual([
      'scan',
      '--targets',
      '10.0.0.1,10.0.0.0/28',
      ...mode,
      '--json',
      '--progress-json',
      '--sessions-dir',
      root,
    ]);
  });

  it('upload adds --upload', () => {
    expect(scanArgs({ targets: 'host.example', profile: 'quick', upload: true }, root).at(-1)).toBe('--upload');
    expect(scanArgs({ targets: 'host.example', upload: false }, root)).not.toContain('--upload');
  });

  it('ports adds --ports <list> as one fixed argument after the mode', () => {
    expect(scanArgs({ targets: '10.0.0.1', profile: 'quick', ports: 'T:22,80,8000-8100,U:161' }, root)).toEqual([
      'scan',
      '--targets',
      '10.0.0.1',
      '-P',
      'quick_recon',
      '--ports',
      'T:22,80,8000-8100,U:161',
      '--json',
      '--progress-json',
      '--sessions-dir',
      root,
    ]);
    expect(scanArgs({ targets: '10.0.0.1' }, root)).not.toContain('--ports');
  });

  it.each(['22 --script=x', '-oN/tmp/x', '22;id', '70000', ''])(
    'a port list outside the rule never becomes an argument: %j',
    (ports) => {
      expect(() => scanArgs({ targets: '10.0.0.1', ports }, root)).toThrow(/payload\.ports must be a port list/);
    },
  );
});

describe('update steps', () => {
  it('a version tag beats the branch and is fetched and checked out as refs/tags/', () => {
    expect(updateSteps({ version: 'v1.2.3', branch: 'dev' }, true)).toEqual([
      ['fetch', '--quiet', '--no-tags', 'origin', '+refs/tags/v1.2.3:refs/tags/v1.2.3'],
      ['checkout', '--quiet', '--detach', 'refs/tags/v1.2.3', '--'],
    ]);
  });

  it('a branch (default main) is fetched, checked out and fast-forwarded', () => {
    expect(updateSteps({}, true)).toEqual([
      ['fetch', '--quiet', '--no-tags', 'origin', '+refs/heads/main:refs/remotes/origin/main'],
      ['checkout', '--quiet', 'main', '--'],
      ['merge', '--quiet', '--ff-only', 'refs/remotes/origin/main'],
    ]);
    expect(updateSteps({ branch: 'release/2' }, false)[1]).toEqual([
      'checkout',
      '--quiet',
      '-b',
      'release/2',
      'refs/remotes/origin/release/2',
      '--',
    ]);
  });

  it('after the checkout moved: npm ci --omit=dev only when the lockfile changed, the bundle always', () => {
    const build = [process.execPath, 'packages/agent/scripts/build-svcd.ts', '--quiet'];
    expect(installSteps(false).map((s) => s.argv)).toEqual([build]);
    expect(installSteps(true).map((s) => s.argv)).toEqual([
      ['npm', 'ci', '--omit=dev', '--workspace', 'packages/agent', '--no-audit', '--no-fund'],
      build,
    ]);
  });
});

describe('--json answers', () => {
  it('reads the whole stdout or the object that ends it', () => {
    expect(jsonAnswer('{\n  "session_id": "a"\n}\n')).toEqual({ session_id: 'a' });
    expect(jsonAnswer('noise\n{\n  "session_id": "b"\n}\n')).toEqual({ session_id: 'b' });
    expect(jsonAnswer('no json here')).toBeNull();
    expect(jsonAnswer('[1]')).toBeNull();
  });
});

describe('commands without a child process', () => {
  const calls = (): Calls => ({ config: [], levels: [], schedules: [] });

  it('run_scan without targets fails with the documented message, before anything runs', async () => {
    const out = await executeCommand(command('run_scan', { targets: ' , ' }), ctxFor(hostFor(calls())));
    expect(out).toEqual({
      ok: false,
      exitCode: 2,
      stdout: '',
      stderr: 'run_scan needs targets: no targets were specified\n',
    });
  });

  it('a payload key this agent does not know is ignored: the command runs with the keys it knows', async () => {
    const c = calls();
    const out = await executeCommand(
      command('set_log_level', { level: 'debug', verbose_modules: ['x'] }),
      ctxFor(hostFor(c)),
    );
    expect(out).toMatchObject({ ok: true, exitCode: 0 });
    expect(c.levels).toEqual(['debug']);
  });

  it('run_scan without upload names the local session and says it was not uploaded', async () => {
    const svc = ['/bin/sh', '-c', 'printf \'{"session_id":"20261127_015300","path":"/x"}\\n\'', 'svc'];
    const out = await executeCommand(
      command('run_scan', { targets: '127.0.0.1', profile: 'quick' }),
      ctxFor(hostFor(calls(), { svcCommand: svc })),
    );
    expect(out).toMatchObject({ ok: true, exitCode: 0, sessionId: null });
    expect(out.stdout).toBe(
      'session 20261127_015300 was not uploaded: it stays on the agent (push_session uploads it)\n' +
        '{"session_id":"20261127_015300","path":"/x"}\n',
    );
  });

  it('run_scan passes ports to svc scan; a port list outside the rule is refused (exit 2) before anything runs', async () => {
    // The child prints its own argv: what svc scan would receive.
    const svc = ['/bin/sh', '-c', 'printf "%s\\n" "$@"', 'svc'];
    const out = await executeCommand(
      command('run_scan', { targets: '127.0.0.1', ports: 'T:22,443,U:161' }),
      ctxFor(hostFor(calls(), { svcCommand: svc })),
    );
    expect(out.stdout).toContain('--ports\nT:22,443,U:161\n');
    const bad = await executeCommand(
      command('run_scan', { targets: '127.0.0.1', ports: '22 --script=x' }),
      ctxFor(hostFor(calls(), { svcCommand: svc })),
    );
    expect(bad).toMatchObject({ ok: false, exitCode: 2, stdout: '' });
    expect(bad.stderr).toContain('payload.ports must be a port list');
  });

  it('a target that could be an option is refused', async () => {
    const out = await executeCommand(command('run_scan', { targets: '-oN/tmp/x' }), ctxFor(hostFor(calls())));
    expect(out.ok).toBe(false);
    expect(out.stderr).toContain('invalid target');
  });

  // The portal refuses the same payloads with the same words (packages/portal/tests/scan-targets-route.test.ts).
  it.each([
    ['0-255.0-255.0-255.0-255', 2 ** 32],
    ['0.0.0.0/0', 2 ** 32],
    ['10.0.0.0/8', 2 ** 24],
  ])('run_scan %s is refused by the address budget (exit 2), before anything runs', async (targets, n) => {
    const out = await executeCommand(command('run_scan', { targets }), ctxFor(hostFor(calls())));
    expect(out).toEqual({
      ok: false,
      exitCode: 2,
      stdout: '',
      stderr: `targets cover ${n} addresses, more than the 65536 allowed per run (SVC_SCAN_MAX_ADDRESSES)\n`,
    });
  });

  it("the agent's SVC_SCAN_MAX_ADDRESSES sets its budget; an invalid one refuses run_scan", async () => {
    const env = (v: string) => ({ childEnv: { ...process.env, SVC_SCAN_MAX_ADDRESSES: v } });
    const small = await executeCommand(
      command('run_scan', { targets: '10.0.0.0/24' }),
      ctxFor(hostFor(calls(), env('255'))),
    );
    expect(small.stderr).toBe(
      'targets cover 256 addresses, more than the 255 allowed per run (SVC_SCAN_MAX_ADDRESSES)\n',
    );
    // Within a raised budget the payload passes and the child runs (here /bin/false: exit 1).
    const large = await executeCommand(
      command('run_scan', { targets: '10.0.0.0/8' }),
      ctxFor(hostFor(calls(), env('16777216'))),
    );
    expect(large).toMatchObject({ ok: false, exitCode: 1 });
    const bad = await executeCommand(command('run_scan', { targets: '10.0.0.1' }), ctxFor(hostFor(calls(), env('x'))));
    expect(bad).toMatchObject({
      ok: false,
      exitCode: 2,
      stderr: 'SVC_SCAN_MAX_ADDRESSES must be a whole number from 1 to 16777216 (got "x")\n',
    });
  });

  it('push_config: allowlisted keys reach applyConfig in their string form; others fail with the allowlist message', async () => {
    const c = calls();
    const host = hostFor(c);
    const ok = await executeCommand(
      command('push_config', { config_key: 'DAEMON_HEARTBEAT_INTERVAL', config_value: 60 }),
      ctxFor(host),
    );
    expect(ok).toEqual({ ok: true, exitCode: 0, stdout: 'DAEMON_HEARTBEAT_INTERVAL=60 applied\n', stderr: '' });
    expect(c.config).toEqual([['DAEMON_HEARTBEAT_INTERVAL', '60']]);
    const refused = await executeCommand(
      command('push_config', { config_key: 'SVC_SESSIONS_DIR', config_value: '/tmp' }),
      ctxFor(host),
    );
    expect(refused.stderr).toBe('Config key not in remote-update allowlist: SVC_SESSIONS_DIR\n');
    const newline = await executeCommand(
      command('push_config', { config_key: 'DAEMON_LOG_LEVEL', config_value: 'debug\nX=1' }),
      ctxFor(host),
    );
    expect(newline.ok).toBe(false);
    expect(c.config).toHaveLength(1);
  });

  it('update_schedule: a loaded schedule is changed; an unknown one or a bad value fails', async () => {
    const c = calls();
    const host = hostFor(c);
    const ok = await executeCommand(
      command('update_schedule', { schedule_id: 'nightly', cron: '0  3 * * *' }),
      ctxFor(host),
    );
    expect(ok.stdout).toBe('schedule nightly: update\n');
    expect(c.schedules).toEqual([['nightly', 'update', { cron: '0 3 * * *', profile: undefined, targets: undefined }]]);
    const unknown = await executeCommand(command('update_schedule', { schedule_id: 'weekly' }), ctxFor(host));
    expect(unknown.stderr).toBe('update_schedule: no loaded schedule weekly\n');
    const bad = await executeCommand(
      command('update_schedule', { schedule_id: 'nightly', cron: '0 0 31 2 *' }),
      ctxFor(host),
    );
    expect(bad).toMatchObject({ ok: false, exitCode: 1, stderr: 'update_schedule: that day never comes\n' });
  });

  it('set_log_level, restart and shutdown say what follows the report', async () => {
    const c = calls();
    const host = hostFor(c);
    expect(await executeCommand(command('set_log_level', { level: 'debug' }), ctxFor(host))).toMatchObject({
      ok: true,
      stdout: 'log level debug\n',
    });
    expect(c.levels).toEqual(['debug']);
    expect((await executeCommand(command('restart', {}), ctxFor(host))).after).toBe('restart');
    expect((await executeCommand(command('shutdown', {}), ctxFor(host))).after).toBe('shutdown');
    expect((await executeCommand(command('shutdown', { graceful: false }), ctxFor(host))).after).toBe('shutdown-now');
  });

  it('update without a git directory cannot self-update', async () => {
    const out = await executeCommand(command('update', {}), ctxFor(hostFor(calls())));
    expect(out).toMatchObject({ ok: false, exitCode: 1, stderr: `${NO_GIT_DIRECTORY}\n` });
  });

  it('update of a directory that is not a git checkout fails clearly', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-nogit-'));
    try {
      const out = await executeCommand(
        command('update', {}),
        ctxFor(hostFor(calls(), { install: { kind: 'checkout', dir } })),
      );
      expect(out.ok).toBe(false);
      expect(out.stderr).toContain("update: needs a git checkout: the agent's install directory is not one");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('push_session with no session in the root fails', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-sessions-'));
    try {
      const host = hostFor(calls(), { sessionsRoot: dir });
      expect((await executeCommand(command('push_session', {}), ctxFor(host))).stderr).toBe(
        "push_session: no session to push: the agent's sessions directory holds none\n",
      );
      expect(
        (await executeCommand(command('push_session', { session_id: '20260101_000000' }), ctxFor(host))).stderr,
      ).toBe("push_session: session 20260101_000000 not found in the agent's sessions directory\n");
      const traversal = await executeCommand(command('push_session', { session_id: '../../etc' }), ctxFor(host));
      expect(traversal.exitCode).toBe(2);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('child processes under the command timeout', () => {
  const pids: number[] = [];
  afterEach(() => {
    for (const pid of pids.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone, as it should be.
      }
    }
  });

  it('passes exit codes and output through', async () => {
    const run = await runProcess(['bash', '-c', 'echo out; echo err >&2; exit 3'], {
      env: process.env,
      deadline: far(),
    });
    expect(run).toEqual({ exitCode: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false });
  });

  it('a program that cannot start is exit 127', async () => {
    const run = await runProcess(['/nonexistent/svc'], { env: process.env, deadline: far() });
    expect(run.exitCode).toBe(127);
    expect(run.stderr).toContain('cannot start /nonexistent/svc');
  });

  it('past the deadline the run ends as a timeout: exit 124, whether or not the program had started', async () => {
    const run = await runProcess(['sleep', '300'], { env: process.env, deadline: Date.now() + 100 });
    expect(run).toEqual({ exitCode: 124, stdout: '', stderr: '', timedOut: true });
  });

  it('a kill takes the whole tree, a grandchild in its own process group included (as at the deadline)', async () => {
    const pidFile = path.join(os.tmpdir(), `svcd-tree-${process.pid}-${Date.now()}`);
    onTestFinished(() => fs.rmSync(pidFile, { force: true }));
    let root = 0;
    const cancel = new AbortController();
    // The grandchild leads its own session and group, as nmap under `svc scan` does. runWithDeadline
    // kills the same way at the deadline and on an abort; the abort comes once the tree is whole.
    const running = runProcess(
      [
        'bash',
        '-c',
        `setsid sleep 300 & echo $! > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; echo started; sleep 300`,
      ],
      {
        env: process.env,
        deadline: far(),
        signal: cancel.signal,
        onStart: (child) => {
          root = child.pid;
          expect(child.startTime).toBe(startTimeOf(child.pid));
        },
      },
    );
    await vi.waitFor(() => expect(fs.existsSync(pidFile)).toBe(true), { timeout: 20_000, interval: 20 });
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    pids.push(root, grandchild);
    expect(startTimeOf(grandchild)).not.toBeNull();
    cancel.abort();
    const run = await running;
    expect(run).toMatchObject({ exitCode: EXIT_CANCELLED, cancelled: true, timedOut: false });
    // SIGKILL is delivered when the kernel next runs the process: on a loaded machine the last
    // exits can trail the run's end by a moment.
    await vi.waitFor(
      () => {
        expect(startTimeOf(root)).toBeNull();
        expect(startTimeOf(grandchild)).toBeNull();
        expect(treeOf(root)).toEqual([]);
      },
      { timeout: 20_000, interval: 50 },
    );
  });
});
