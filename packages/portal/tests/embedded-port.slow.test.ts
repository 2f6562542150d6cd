import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ip, NETLAB_PREFIX, removeNamespace } from '@svc/test-support/netlab/namespaces';
import {
  clusterDir,
  killAll,
  makeDataDir,
  PORTAL_MAIN,
  type PortalProcess,
  spawnPortal,
  stopProcess,
  waitForExit,
} from '@svc/test-support/portal-process';

/**
 * With SVC_EMBEDDED_PG_PORT unset, the embedded PostgreSQL takes 54329 when it
 * is free and another free port when not, so two portals with their own data dirs start side by
 * side on one host; set and taken, the start fails naming the setting. The portals run in a
 * network namespace of their own: its 127.0.0.1 has every port free, 54329 included, whatever
 * else runs on this machine, and nothing here takes a port another test may want.
 */

const run = promisify(execFile);
const NS = `${NETLAB_PREFIX}${process.pid}x1-ports`;
const WAIT = { timeout: 90_000, interval: 100 };

function start(dataDir: string, env: Record<string, string | undefined> = {}): Promise<PortalProcess> {
  return spawnPortal({
    dataDir,
    // spawnPortal names a port of its own; removed, the portal is on its defaults.
    env: { SVC_EMBEDDED_PG_PORT: undefined, SVC_LOG_LEVEL: 'info', ...env },
    command: ['ip', 'netns', 'exec', NS, process.execPath, PORTAL_MAIN],
  });
}

/** GET /readyz from inside the namespace: the status code, or 0 when nothing answers. */
async function readyz(p: PortalProcess): Promise<number> {
  const { stdout } = await run('ip', [
    'netns',
    'exec',
    NS,
    'curl',
    '-s',
    '-o',
    '/dev/null',
    '-m',
    '5',
    '-w',
    '%{http_code}',
    `http://127.0.0.1:${p.port}/readyz`,
  ]).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '0' }));
  return Number(stdout);
}

async function ready(p: PortalProcess): Promise<void> {
  await p.waitForOutput(/"msg":"portal listening"/, 90_000);
  await vi.waitFor(async () => expect(await readyz(p)).toBe(200), WAIT);
}

/** The port of the "embedded PostgreSQL started" line, and the port in the running server's postmaster.pid. */
async function pgPorts(p: PortalProcess): Promise<{ logged: number; pidFile: number }> {
  const logged = Number(/"port":(\d+)[^\n]*"msg":"embedded PostgreSQL started"/.exec(p.stdout())?.[1]);
  const pidFile = Number(
    (await fs.readFile(path.join(clusterDir(p.dataDir), 'postmaster.pid'), 'utf8')).split('\n')[3],
  );
  return { logged, pidFile };
}

let first: string;
let second: string;

beforeAll(async () => {
  ip(['netns', 'add', NS]);
  ip(['-n', NS, 'link', 'set', 'lo', 'up']);
  [first, second] = await Promise.all([makeDataDir('svc-port-a-'), makeDataDir('svc-port-b-')]);
});
afterAll(async () => {
  await killAll();
  removeNamespace(NS);
});

describe('the embedded PostgreSQL port when SVC_EMBEDDED_PG_PORT is unset', () => {
  let a: PortalProcess;
  let b: PortalProcess;
  let bPort: number;

  it('two portals with their own data dirs, started at once on one host, both answer /readyz', async () => {
    [a, b] = await Promise.all([start(first), start(second)]);
    await Promise.all([ready(a), ready(b)]);
    const ports = await Promise.all([pgPorts(a), pgPorts(b)]);
    for (const { logged, pidFile } of ports) expect(logged).toBe(pidFile);
    // One took the default, the other a free port the system gave.
    const [pa, pb] = ports.map((p) => p.logged) as [number, number];
    expect([pa, pb]).toContain(54329);
    expect(pa).not.toBe(pb);
    // Make `a` the one on 54329, whichever it was.
    if (pb === 54329) [a, b] = [b, a];
    bPort = (await pgPorts(b)).logged;
    expect(bPort).toBeGreaterThan(1023);
  });

  it('a restart of the same data dir takes the port it had before while that is free', async () => {
    expect(await stopProcess(b, 'SIGTERM')).toEqual({ code: 0, signal: null });
    b = await start(b.dataDir);
    await ready(b);
    expect((await pgPorts(b)).logged).toBe(bPort);
    expect(await readyz(a)).toBe(200);
  });

  it('set and held by another process: the start fails with exit 1, naming SVC_EMBEDDED_PG_PORT', async () => {
    const c = await start(await makeDataDir('svc-port-c-'), { SVC_EMBEDDED_PG_PORT: '54329' });
    expect(await waitForExit(c, 90_000)).toEqual({ code: 1, signal: null });
    expect(c.stderr()).toBe(
      'The portal failed to start: SVC_EMBEDDED_PG_PORT=54329: 127.0.0.1:54329 is already in use by another process; set SVC_EMBEDDED_PG_PORT to a free port, or unset it to let the portal choose one\n',
    );
    // The portal on that port is undisturbed.
    expect(await readyz(a)).toBe(200);
    expect(await stopProcess(a, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(await stopProcess(b, 'SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
