import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
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
  for (let attempt = 0; attempt < 20; attempt++) {
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
  for (const entry of readdirSync(tmpdir()).filter(deadRun)) {
    rmSync(join(tmpdir(), entry), { recursive: true, force: true });
  }
  return stale;
}
