import fs from 'node:fs';

/**
 * What a process costs its host, read from /proc (Linux): shared by the idle agent bench
 * (bench/agent-idle.ts) and the bound the suite checks (packages/agent/tests/idle-memory.test.ts).
 */

/** The idle agent's resident memory goal, in MB. */
export const IDLE_RSS_MB_BELOW = 60;

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux for user space). */
export const TICKS_PER_S = 100;

/** User plus system CPU time of `pid` so far, in clock ticks. */
export function cpuTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(rest[11]) + Number(rest[12]);
}

/** Resident memory of `pid` (VmRSS), in MB. */
export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
  return kb / 1024;
}

/** The times of the heartbeats in svcd's debug log output. */
export function heartbeatTimes(chunk: string): number[] {
  return [...chunk.matchAll(/^ts=(\S+) level=debug msg="heartbeat sent"/gm)].map((m) => Date.parse(m[1] as string));
}
