import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findProgram } from '../src/kit/process/find-program.ts';
import { killTree, startTimeOf, treeOf, untilGone } from '../src/kit/process/kill-tree.ts';
import { runWithDeadline } from '../src/kit/process/run.ts';

/** packages/client/src/kit/process: finding a program on PATH and killing a process tree, on real files and processes. */

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-process-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function program(sub: string, name: string): string {
  fs.mkdirSync(path.join(dir, sub), { recursive: true });
  const file = path.join(dir, sub, name);
  fs.writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return file;
}

describe('findProgram', () => {
  it('skips a directory called like the program: only an executable regular file counts', () => {
    // The scan's lookup once took such a directory for nmap while the dependency check did not.
    fs.mkdirSync(path.join(dir, 'a', 'nmap'), { recursive: true, mode: 0o755 });
    const real = program('b', 'nmap');
    expect(findProgram('nmap', { PATH: `${path.join(dir, 'a')}:${path.join(dir, 'b')}` })).toBe(real);
  });

  it('never looks in an empty or relative PATH entry, so the working directory cannot supply a program', () => {
    // The host checks' lookup once searched relative entries while the scan's did not.
    const rel = program('rel', 'nmap');
    expect(findProgram('nmap', { PATH: path.relative(process.cwd(), path.dirname(rel)) })).toBeNull();
    expect(findProgram('nmap', { PATH: `::${path.relative(process.cwd(), path.dirname(rel))}` })).toBeNull();
    expect(findProgram('nmap', { PATH: `relative:${path.dirname(rel)}` })).toBe(rel);
  });

  it('takes the first of several names per directory, a file that is not executable not at all, and a path as it is', () => {
    const t = program('multi', 'testssl');
    fs.writeFileSync(path.join(dir, 'multi', 'plain'), 'x', { mode: 0o644 });
    expect(findProgram(['testssl.sh', 'testssl'], { PATH: path.join(dir, 'multi') })).toBe(t);
    expect(findProgram('plain', { PATH: path.join(dir, 'multi') })).toBeNull();
    expect(findProgram(t, {})).toBe(t);
    expect(findProgram(path.join(dir, 'multi', 'plain'), {})).toBeNull();
    expect(findProgram('nmap', {})).toBeNull();
  });
});

describe('killTree', () => {
  it('kills a process and the child it started, and untilGone waits until both are gone', async () => {
    // bash starts cat (which waits on the shared stdin: a background job's stdin is /dev/null
    // unless redirected) and prints its pid; nothing ends by itself.
    const parent = spawn('bash', ['-c', 'cat <&0 & echo $!; wait'], {
      detached: true,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const exited = once(parent, 'exit');
    const [line] = (await once(parent.stdout, 'data')) as [Buffer];
    const child = Number(line.toString().trim());
    const pid = parent.pid as number;
    expect(treeOf(pid).sort()).toEqual([pid, child].sort());

    const killed = killTree(pid);
    expect(killed.map((k) => k.pid).sort()).toEqual([pid, child].sort());
    const [, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe('SIGKILL');
    await untilGone(killed);
    expect(startTimeOf(child)).toBeNull();
    parent.stdin.destroy();
  });
});

describe('runWithDeadline', () => {
  it('passes input on stdin and returns output and exit code', async () => {
    const r = await runWithDeadline(['bash', '-c', 'cat; echo err >&2; exit 3'], {
      input: 'hello\n',
      timeoutMs: 30_000,
    });
    expect(r).toMatchObject({
      exitCode: 3,
      signal: null,
      stdout: 'hello\n',
      stderr: 'err\n',
      timedOut: false,
      error: null,
    });
  });

  it('keeps the head of each stream up to the limit', async () => {
    const r = await runWithDeadline(['cat'], { input: 'x'.repeat(100), timeoutMs: 30_000, maxOutputBytes: 10 });
    expect(r.stdout).toBe('x'.repeat(10));
  });

  it('keeps the tail of stderr when asked, and streams both outputs as they arrive', async () => {
    const seen: string[] = [];
    const r = await runWithDeadline(
      ['bash', '-c', 'printf "%s" first-; printf "%s" middle- >&2; printf "%s" end >&2'],
      {
        timeoutMs: null,
        stderrTail: 5,
        maxOutputBytes: 0,
        onStdout: (c) => seen.push(`out:${c.toString()}`),
        onStderr: (c) => seen.push(`err:${c.toString()}`),
      },
    );
    expect(r).toMatchObject({ exitCode: 0, stdout: '', stderr: 'e-end', timedOut: false });
    expect(seen.join('')).toContain('out:first-');
    expect(
      seen
        .filter((c) => c.startsWith('err:'))
        .map((c) => c.slice(4))
        .join(''),
    ).toBe('middle-end');
  });

  it("sameGroup keeps the child in the client's process group; by default it leads its own", async () => {
    const r = await runWithDeadline(['bash', '-c', 'ps -o pgid= -p $$'], { timeoutMs: 30_000, sameGroup: true });
    const ours = Number(execFileSync('ps', ['-o', 'pgid=', '-p', String(process.pid)], { encoding: 'utf8' }).trim());
    expect(Number(r.stdout.trim())).toBe(ours);
    const own = await runWithDeadline(['bash', '-c', 'ps -o pgid= -p $$; echo $$'], { timeoutMs: 30_000 });
    const [pgid, pid] = own.stdout.trim().split(/\s+/).map(Number);
    expect(pgid).toBe(pid);
  });

  it("inheritStdin hands the client's own stdin to the child, else it reads /dev/null", async () => {
    // A client whose stdin is a pipe: its child (cat) reads what was written to the client.
    const run = path.join(import.meta.dirname, '..', 'src', 'kit', 'process', 'run.ts');
    const script = `import { runWithDeadline } from ${JSON.stringify(run)};
      const r = await runWithDeadline(['cat'], { timeoutMs: 30000, inheritStdin: true });
      process.stdout.write(r.stdout);`;
    const client = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      input: 'from the client',
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(client.stderr).toBe('');
    expect(client.stdout).toBe('from the client');
    const none = await runWithDeadline(['readlink', '/proc/self/fd/0'], { timeoutMs: 30_000 });
    expect(none.stdout.trim()).toBe('/dev/null');
  });

  it('a program that cannot start is an error, not a throw', async () => {
    const r = await runWithDeadline([path.join(dir, 'no-such-program')], { timeoutMs: 30_000 });
    expect(r.error?.message).toMatch(/ENOENT/);
    expect(r.exitCode).toBeNull();
  });

  it('past the deadline the group gets SIGTERM, then SIGKILL when it ignores that', async () => {
    // tail -f waits forever on its own; TERM is ignored across the exec.
    const r = await runWithDeadline(['bash', '-c', 'trap "" TERM; exec tail -f /dev/null'], {
      timeoutMs: 50,
      kill: { mode: 'group', graceMs: 50 },
    });
    expect(r).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
  });

  it('tree mode kills a grandchild in its own session too, and returns only once it is gone', async () => {
    let grandchild = 0;
    const stop = new AbortController();
    const r = await runWithDeadline(['bash', '-c', 'setsid tail -f /dev/null & echo $!; wait'], {
      timeoutMs: 30_000,
      kill: { mode: 'tree' },
      abort: stop.signal,
      onStdout: (chunk) => {
        grandchild = Number(chunk.toString().trim());
        // Once the grandchild runs, the run is cut short as a deadline would.
        stop.abort();
      },
    });
    expect(grandchild).toBeGreaterThan(0);
    expect(r.timedOut).toBe(true);
    expect(startTimeOf(grandchild)).toBeNull();
  });
});
