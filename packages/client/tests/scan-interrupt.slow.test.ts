import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_COMPILE_CACHE, SVC } from '@svc/test-support/cli';
import { testTempDir } from '@svc/test-support/temp-dirs';
import { until } from '@svc/test-support/wait';

/**
 * Stopping `svc scan` stops the scan. nmap leads its own process group, which a terminal's
 * Ctrl-C does not reach: the client ends through its exit listeners instead of dying at once,
 * so they kill that group and remove the scan's temp directory (kit/process/exit-on-signals.ts).
 * The nmap here is a stand-in on PATH that records its pid and waits; nothing is scanned.
 */

/** Whether a process with this pid still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('svc scan stopped mid-scan', () => {
  it.each([
    // A terminal's Ctrl-C: SIGINT to the foreground process group, the client's.
    { signal: 'SIGINT', to: 'its process group', status: 130 },
    // kill, systemd or a supervisor: SIGTERM to the client alone.
    { signal: 'SIGTERM', to: 'the client', status: 143 },
  ] as const)(
    'by $signal to $to: exits $status, its nmap is gone and so is its temp directory',
    async ({ signal, to, status }) => {
      const dir = await testTempDir('svc-interrupt-');
      const bin = path.join(dir, 'bin');
      const tmp = path.join(dir, 'tmp');
      const pidFile = path.join(dir, 'nmap.pid');
      await fs.mkdir(bin);
      await fs.mkdir(tmp);
      await fs.writeFile(
        path.join(bin, 'nmap'),
        `#!/bin/bash\nif [[ "$1" == "--version" || "$1" == "-V" ]]; then echo 'Nmap version 7.93 ( https://nmap.org )'; exit 0; fi\necho $$ > '${pidFile}'\nexec sleep 300\n`,
        { mode: 0o755 },
      );
      const child = spawn(
        SVC,
        ['scan', '--targets', '127.0.0.1', '--ports', 'T:9', '--sessions-dir', path.join(dir, 's'), '--no-tools'],
        {
          env: {
            PATH: `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
            HOME: dir,
            LANG: 'C.UTF-8',
            TMPDIR: tmp,
            NODE_COMPILE_CACHE,
          },
          // Its own process group, as a shell's foreground job has.
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      child.stdout.resume();
      const exited = new Promise<{ code: number | null; sig: string | null }>((resolve) =>
        child.on('exit', (code, sig) => resolve({ code, sig })),
      );
      let nmapPid = 0;
      await until(
        async () => {
          nmapPid = Number(await fs.readFile(pidFile, 'utf8').catch(() => '0'));
          return nmapPid > 0;
        },
        60_000,
        () => `the stand-in nmap to start; stderr: ${stderr}`,
      );
      expect((await fs.readdir(tmp)).filter((f) => f.startsWith('svc-scan-tools-'))).toHaveLength(1);

      process.kill(to === 'the client' ? child.pid! : -child.pid!, signal);
      expect(await exited).toEqual({ code: status, sig: null });
      await until(
        () => !alive(nmapPid),
        20_000,
        () => `nmap ${nmapPid} to be gone`,
      );
      expect(await fs.readdir(tmp)).toEqual([]);
    },
  );
});
