import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pruneBinaryCopies } from '../src/db/embedded-prune.ts';

/**
 * Copies of the embedded PostgreSQL binaries of other versions are removed at
 * start, never one a running process still uses. The directory is a scratch one here (the real
 * /var/lib/svc-portal-postgres holds copies other tests on this host may be running from), and
 * the process using an old copy is a real one started from it.
 */

const HOUR_AGO = new Date(Date.now() - 3_600_000);
let dir: string;
let user: ChildProcess | null = null;
const lines: string[] = [];
const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });

/** A copy as the portal makes one: `bin/postgres` and a library, made an hour ago. */
async function copy(name: string, program = '/bin/sleep'): Promise<string> {
  const at = path.join(dir, name);
  await fs.mkdir(path.join(at, 'bin'), { recursive: true });
  await fs.mkdir(path.join(at, 'lib'));
  await fs.copyFile(program, path.join(at, 'bin', 'postgres'));
  await fs.writeFile(path.join(at, 'lib', 'libpq.so.5'), 'library');
  await fs.utimes(at, HOUR_AGO, HOUR_AGO);
  return at;
}

const exists = (p: string) =>
  fs.access(p).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-prune-'));
});
afterAll(async () => {
  user?.kill('SIGKILL');
  await fs.rm(dir, { recursive: true, force: true });
});

describe('pruning copies of the embedded PostgreSQL binaries', () => {
  it('removes unused copies of other versions; keeps the running version, one in use, a fresh one and a copy in progress', async () => {
    const current = await copy('binaries-17.10.0');
    const inUse = await copy('binaries-16.4.0');
    const unused = await copy('binaries-15.8.0');
    // A copy an earlier portal was making when it died (its pid is gone), and one being made now (ours).
    const deadMaker = spawn('/bin/true');
    await new Promise((resolve) => deadMaker.once('exit', resolve));
    const abandoned = await copy(`binaries-15.9.0.${deadMaker.pid}.partial`);
    const inProgress = await copy(`binaries-17.11.0.${process.pid}.partial`);
    // Just made: a portal of that version may be about to start from it.
    const fresh = await copy('binaries-18.0.0');
    await fs.utimes(fresh, new Date(), new Date());
    // A cluster directory beside the copies is never a candidate.
    const cluster = path.join(dir, '0123456789abcdef');
    await fs.mkdir(cluster);

    // An older portal's server still runs from its copy.
    user = spawn(path.join(inUse, 'bin', 'postgres'), ['300'], { stdio: 'ignore' });
    const pid = user.pid as number;
    await vi.waitFor(
      async () => expect(await fs.readlink(`/proc/${pid}/exe`)).toBe(path.join(inUse, 'bin', 'postgres')),
      { timeout: 10_000, interval: 20 },
    );

    const removed = await pruneBinaryCopies(dir, 'binaries-17.10.0', logger);
    expect(removed.sort()).toEqual([abandoned, unused].sort());
    expect((await fs.readdir(dir)).sort()).toEqual(
      [
        '0123456789abcdef',
        'binaries-16.4.0',
        'binaries-17.10.0',
        `binaries-17.11.0.${process.pid}.partial`,
        'binaries-18.0.0',
      ].sort(),
    );
    for (const kept of [current, inUse, inProgress, fresh, cluster]) expect(await exists(kept)).toBe(true);
    // The process using the old copy runs on, untouched.
    expect(user.exitCode).toBeNull();

    const logged = lines.map((l) => JSON.parse(l) as { msg: string; removed?: string[]; kept?: string[] });
    expect(
      logged.find((l) => l.msg === 'removed copies of other embedded PostgreSQL versions')?.removed?.sort(),
    ).toEqual([abandoned, unused].sort());
    expect(logged.find((l) => l.msg.startsWith('kept copies'))?.kept).toEqual([inUse]);
  });

  it('removes the old copy once nothing runs from it any more; a directory that does not exist is no error', async () => {
    const inUse = path.join(dir, 'binaries-16.4.0');
    user?.kill('SIGKILL');
    await vi.waitFor(() => expect(user?.exitCode !== null || user?.signalCode !== null).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    // The killed process is reaped by this test's process (its parent) on exit: its /proc entry goes.
    await vi.waitFor(async () => expect(await exists(`/proc/${user?.pid}`)).toBe(false), {
      timeout: 10_000,
      interval: 20,
    });
    expect(await pruneBinaryCopies(dir, 'binaries-17.10.0', logger)).toEqual([inUse]);
    expect(await exists(inUse)).toBe(false);
    expect(await pruneBinaryCopies(path.join(dir, 'missing'), 'binaries-17.10.0', logger)).toEqual([]);
  });
});
