import fs from 'node:fs';
import { readdir, readlink } from 'node:fs/promises';

/**
 * What a process costs its host, read from /proc (Linux): shared by the idle agent bench
 * (bench/agent-idle.ts) and the bound the suite checks (packages/agent/tests/idle-memory.slow.test.ts);
 * and which processes work in, or are rooted at, a directory.
 */

/** The idle agent's resident memory goal, in MB (the bench's figure). */
export const IDLE_RSS_MB_BELOW = 60;

/**
 * The bound the suite checks, in MB: the daemon's private memory (RssAnon). About 44 MB of an idle
 * daemon's RSS are pages of the Node binary it touched (RssFile): shared with every Node process on
 * the host, dropped by the kernel under pressure, and a megabyte more or less by Node's version and
 * the kernel's read-ahead, so RSS sits within a few MB of the 60 MB goal on either side. The private
 * part (17 to 19 MB measured) is what a leak or a heavy new dependency would grow.
 */
export const IDLE_PRIVATE_MB_BELOW = 24;

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux for user space). */
export const TICKS_PER_S = 100;

/** User plus system CPU time of `pid` so far, in clock ticks. */
export function cpuTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(rest[11]) + Number(rest[12]);
}

function statusMb(pid: number, field: 'VmRSS' | 'RssAnon'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]);
  return kb / 1024;
}

/** Resident memory of `pid` (VmRSS), in MB. */
export const rssMb = (pid: number): number => statusMb(pid, 'VmRSS');

/** Private resident memory of `pid` (RssAnon: heap, stacks, no file-backed pages), in MB. */
export const privateMb = (pid: number): number => statusMb(pid, 'RssAnon');

/** The times of the heartbeats in svcd's debug log output. */
export function heartbeatTimes(chunk: string): number[] {
  return [...chunk.matchAll(/^ts=(\S+) level=debug msg="heartbeat sent"/gm)].map((m) => Date.parse(m[1] as string));
}

/**
 * Every process whose /proc/<pid>/`link` (its working directory, or its root directory after a
 * chroot) is `target`, whoever started it.
 */
export async function processesWithLink(link: 'cwd' | 'root', target: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    if ((await readlink(`/proc/${entry}/${link}`).catch(() => null)) === target) pids.push(Number(entry));
  }
  return pids;
}
