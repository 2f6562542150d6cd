import fs from 'node:fs';
import { startTimeOf, treeOf } from '@svc/client/kit';

/**
 * Every process that appears under `root` while watched, with its /proc start time and name, so a
 * test can tell afterwards whether any of them is still alive (a pid reused since is not).
 */
export function watchTree(root: number, everyMs = 100) {
  const seen = new Map<number, { start: string; comm: string }>();
  const sample = () => {
    for (const pid of treeOf(root)) {
      // Seen pids are sampled again: a child caught between fork and exec still has its parent's
      // name, and only a later sample shows the program it became (e.g. nmap).
      if (pid === root) continue;
      const start = startTimeOf(pid);
      let comm: string;
      try {
        comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        continue;
      }
      if (start !== null) seen.set(pid, { start, comm });
    }
  };
  const timer = setInterval(sample, everyMs);
  return {
    names: () => [...seen.values()].map((p) => p.comm),
    pidsNamed: (name: string) => [...seen].filter(([, p]) => p.comm === name).map(([pid]) => pid),
    /** Watched processes still alive (same pid, same start time). */
    alive: () => [...seen].filter(([pid, p]) => startTimeOf(pid) === p.start).map(([pid, p]) => `${pid} ${p.comm}`),
    stop: () => clearInterval(timer),
  };
}
