import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '@svc/protocol/node';

/** Every namespace of the test network starts with this; the creating process's pid follows. */
export const NETLAB_PREFIX = 'svcnl-';

export function ip(args: readonly string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function listNamespaces(): string[] {
  return ip(['netns', 'list'])
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n !== '');
}

/** The pids of every process running inside a namespace (`ip netns pids`). */
export function namespacePids(ns: string): number[] {
  try {
    return ip(['netns', 'pids', ns])
      .split('\n')
      .filter((l) => /^\d+$/.test(l))
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * Kills every process inside the namespace, then deletes it. Deleting a namespace alone would
 * leave its daemons running, so the processes go first, found by namespace rather than by name.
 */
export function removeNamespace(ns: string): void {
  // A loaded machine may take a while to end a daemon caught in a disk write: up to 10 s.
  for (let attempt = 0; attempt < 200; attempt++) {
    const pids = namespacePids(ns);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    execFileSync('sleep', ['0.05']);
  }
  try {
    ip(['netns', 'del', ns]);
  } catch {
    // Already removed.
  }
}

const deadRun = (name: string) => {
  const m = /^svcnl-(\d+)x\d+-/.exec(name);
  return m !== null && !processAlive(Number(m[1]));
};

/**
 * Removes the namespaces (with their processes) and temp dirs of earlier runs whose process is
 * gone, killed before it could clean up. Returns the namespaces removed.
 */
export function sweepStale(): string[] {
  const stale = listNamespaces().filter(deadRun);
  for (const ns of stale) removeNamespace(ns);
  for (const entry of readdirSync(tmpdir()).filter(deadRun)) removeTree(join(tmpdir(), entry));
  return stale;
}

/**
 * Removes a run's temp dir until it is gone: another test file's sweep may be removing it at the
 * same moment, and a daemon's last write may land while it goes. Bounded: 10 s, then the error.
 */
export function removeTree(dir: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if (attempt >= 200) throw err;
    }
    if (!existsSync(dir)) return;
    if (attempt >= 200) throw new Error(`could not remove ${dir}: it keeps coming back`);
    execFileSync('sleep', ['0.05']);
  }
}
