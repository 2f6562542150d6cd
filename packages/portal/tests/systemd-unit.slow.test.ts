import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { http as request } from '@svc/test-support/http';
import { REPO } from '@svc/test-support/cli';
import { killAll, spawnPortal, stopProcess } from '@svc/test-support/portal-process';

/**
 * The portal's systemd unit (packages/portal/systemd/svc-portal.service): systemd accepts it, its
 * sandbox scores what docs/deployment.md says, its readiness check waits for /readyz, and the
 * portal runs with its embedded PostgreSQL as an unprivileged user, as the unit runs it.
 */

const UNIT = path.join(REPO, 'packages/portal/systemd/svc-portal.service');
const WAIT_READY = path.join(REPO, 'packages/portal/systemd/wait-ready.sh');
const ANALYZE = '/usr/bin/systemd-analyze';
const hasAnalyze = fs.existsSync(ANALYZE);
const run = promisify(execFile);
const unitText = fs.readFileSync(UNIT, 'utf8');
const tmpDirs: string[] = [];

afterAll(async () => {
  await killAll();
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** The unit with /opt/svc pointing at this checkout (verify checks that the executables exist). */
function unitHere(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-portal-unit-'));
  tmpDirs.push(dir);
  const unit = path.join(dir, 'svc-portal.service');
  fs.writeFileSync(unit, unitText.replaceAll('/opt/svc', path.resolve(REPO)));
  return unit;
}

/** Runs the readiness check as ExecStartPost would, with `env` as the unit's environment. */
async function waitReady(env: Record<string, string>, user: { uid?: number; gid?: number } = {}) {
  try {
    const { stdout, stderr } = await run(WAIT_READY, [], { env: { PATH: '/usr/bin:/bin', ...env }, ...user });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A /readyz that answers 503 to the first `notReady` requests, then 200; counts the requests. */
async function readyzServer(notReady: number): Promise<{ port: number; hits: () => number; close: () => void }> {
  let hits = 0;
  const server = http.createServer((req, res) => {
    hits++;
    res.statusCode = req.url === '/readyz' && hits > notReady ? 200 : 503;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, hits: () => hits, close: () => server.close() };
}

describe('the portal systemd unit', () => {
  // scripts/setup-system.sh installs systemd, so the suite has systemd-analyze; a host without it skips.
  it.skipIf(!hasAnalyze)('passes systemd-analyze verify (installed at this checkout)', async () => {
    const { stdout, stderr } = await run(ANALYZE, ['verify', unitHere()]);
    expect({ stdout, stderr }).toEqual({ stdout: '', stderr: '' });
  });

  it.skipIf(!hasAnalyze)('has the exposure level docs/deployment.md records (systemd-analyze security)', async () => {
    const { stdout } = await run(ANALYZE, ['security', '--offline=true', '--no-pager', unitHere()]);
    const measured = /Overall exposure level for svc-portal\.service: (\d+\.\d+) /.exec(stdout)?.[1];
    const doc = fs.readFileSync(path.join(REPO, 'docs/deployment.md'), 'utf8');
    const recorded = /exposure level \*\*(\d+\.\d+)\*\*/.exec(doc)?.[1];
    expect(measured).toBeDefined();
    expect(recorded).toBe(measured);
  });

  it('runs as svc-portal in a sandbox with only the data directory writable, restarting on failure', () => {
    const lines = new Set(unitText.split('\n'));
    for (const line of [
      'Type=exec',
      'User=svc-portal',
      'Group=svc-portal',
      'Environment=SVC_DATA_DIR=/var/lib/svc-portal',
      'EnvironmentFile=-/etc/svc-portal/portal.env',
      'ExecStart=/opt/svc/node_modules/node/bin/node --heap-growing-percent=100 packages/portal/src/main.ts',
      'ExecStartPost=/opt/svc/packages/portal/systemd/wait-ready.sh',
      'Restart=on-failure',
      'RestartPreventExitStatus=2',
      'ReadWritePaths=/var/lib/svc-portal',
      'ProtectSystem=strict',
      'ProtectHome=yes',
      'PrivateTmp=yes',
      'NoNewPrivileges=yes',
      'CapabilityBoundingSet=',
      'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6',
      'SystemCallFilter=@system-service',
      'SystemCallFilter=~@privileged',
    ]) {
      expect(lines.has(line), line).toBe(true);
    }
    // The portal sends no sd_notify READY: Type=notify would never turn active.
    expect(unitText).not.toMatch(/^Type=notify/m);
    expect(fs.statSync(WAIT_READY).mode & 0o111).toBe(0o111);
  });

  it('the readiness check waits for /readyz to answer 200 (HOST 0.0.0.0 is asked on 127.0.0.1)', async () => {
    const server = await readyzServer(2);
    try {
      const res = await waitReady({ HOST: '0.0.0.0', PORT: String(server.port) });
      expect(res).toEqual({ code: 0, stdout: '', stderr: '' });
      expect(server.hits()).toBe(3);
    } finally {
      server.close();
    }
  });

  it('the readiness check gives up after SVC_READY_TIMEOUT_SECONDS with exit 1 and says why', async () => {
    const server = await readyzServer(Number.POSITIVE_INFINITY);
    try {
      const res = await waitReady({ PORT: String(server.port), SVC_READY_TIMEOUT_SECONDS: '1' });
      expect(res).toEqual({
        code: 1,
        stdout: '',
        stderr: `svc-portal: http://127.0.0.1:${server.port}/readyz did not answer 200 within 1 s\n`,
      });
      expect(server.hits()).toBeGreaterThanOrEqual(1);
    } finally {
      server.close();
    }
  });
});

/** An unprivileged user that can read this checkout, as svc-portal reads /opt/svc; null when there is none. */
async function unprivilegedUser(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const user = {
    uid: Number((await run('id', ['-u', 'nobody'])).stdout),
    gid: Number((await run('id', ['-g', 'nobody'])).stdout),
  };
  const readable = await run('test', ['-r', path.join(REPO, 'packages/portal/src/main.ts')], user).then(
    () => true,
    () => false,
  );
  return readable ? user : null;
}
const user = await unprivilegedUser();

// Needs root to switch to `nobody`, and a checkout that user can read (not one inside /root).
describe.skipIf(user === null)('the portal as an unprivileged user, as the unit runs it', () => {
  it('its embedded PostgreSQL runs as the same user in the data directory it owns; /readyz answers, SIGTERM stops it', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-portal-unprivileged-'));
    tmpDirs.push(dataDir);
    fs.chownSync(dataDir, user!.uid, user!.gid);
    const p = await spawnPortal({
      dataDir,
      user: user!,
      // Nothing of root's: its home and the tests' compile cache are not this user's to use.
      env: { SVC_LOG_LEVEL: 'info', HOME: undefined, NODE_COMPILE_CACHE: undefined },
    });
    await p.waitForOutput(/"msg":"portal listening"/, 90_000);
    expect(await waitReady({ PORT: String(p.port) }, user!)).toEqual({ code: 0, stdout: '', stderr: '' });
    const res = await request(p.url, 'GET', '/readyz');
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { status: 'ready' } });

    // The cluster stays in the data directory and belongs to the portal's user: no postgres user involved.
    expect(p.stdout()).not.toContain('kept outside the data directory');
    const pidFile = fs.statSync(path.join(dataDir, 'postgres', 'postmaster.pid'));
    expect({ uid: pidFile.uid, gid: pidFile.gid }).toEqual(user);
    const postmaster = Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const status = fs.readFileSync(`/proc/${postmaster}/status`, 'utf8');
    expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe(String(user!.uid));

    expect(await stopProcess(p)).toEqual({ code: 0, signal: null });
    expect(p.stdout()).toContain('embedded PostgreSQL stopped');
  });
});
