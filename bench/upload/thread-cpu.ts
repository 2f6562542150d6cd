/**
 * CPU time of a process's main thread (the one that runs the event loop, tid = pid) versus
 * all its threads, from /proc/<pid>/task/<tid>/stat (Linux only). A Node server is bound
 * by its main thread: at ~100 % of one core it cannot go faster whatever the libuv thread
 * pool (file writes, fsync) still has to give.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

let hz: number | null = null;
function ticksPerSecond(): number {
  if (hz === null) {
    try {
      hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      hz = 100;
    }
  }
  return hz;
}

/** utime + stime of one stat file, seconds; null when unreadable. */
function cpuSeconds(statFile: string): number | null {
  let text: string;
  try {
    text = fs.readFileSync(statFile, 'utf8');
  } catch {
    return null;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / ticksPerSecond();
}

export interface ThreadCpu {
  /** % of one core used by the main thread over the window. */
  mainPercent: number | null;
  /** % of one core used by every other thread (libuv pool, V8 helpers) over the window. */
  otherThreadsPercent: number | null;
}

/** Start measuring; `stop()` gives the window's figures. */
export function startThreadCpu(pid: number): { stop(): ThreadCpu } {
  const t0 = performance.now();
  const main0 = cpuSeconds(`/proc/${pid}/task/${pid}/stat`);
  const all0 = cpuSeconds(`/proc/${pid}/stat`);
  return {
    stop() {
      const wall = (performance.now() - t0) / 1000;
      const main1 = cpuSeconds(`/proc/${pid}/task/${pid}/stat`);
      const all1 = cpuSeconds(`/proc/${pid}/stat`);
      const pct = (s: number): number => Math.round((s / wall) * 1000) / 10;
      if (main0 === null || main1 === null || all0 === null || all1 === null || wall <= 0)
        return { mainPercent: null, otherThreadsPercent: null };
      return { mainPercent: pct(main1 - main0), otherThreadsPercent: pct(all1 - all0 - (main1 - main0)) };
    },
  };
}
