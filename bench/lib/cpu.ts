import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/**
 * CPU time used by processes during a load phase, as a percentage of one core
 * (100 = one core busy for the whole phase). Linux only (/proc); elsewhere every
 * figure is null. It tells whether a phase was bound by the server, the load
 * generator or neither: on a 2-core machine the load generator and the server
 * compete for the same two cores.
 */

let ticksPerSecond: number | null = null;
function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

interface Stat {
  ppid: number;
  /** utime + stime of the process itself, in seconds. */
  own: number;
  /** cutime + cstime: reaped children, in seconds. */
  children: number;
}

function readStat(pid: number): Stat | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime is field 14 -> index 11.
  const num = (i: number): number => Number(fields[i] ?? 0);
  const hz = clockTicks();
  return { ppid: num(1), own: (num(11) + num(12)) / hz, children: (num(13) + num(14)) / hz };
}

/** A process tree to account: its root pid and whether live descendants count too. */
export interface CpuTarget {
  name: string;
  /** Evaluated at each sample (e.g. the postmaster pid is only known once PostgreSQL runs). */
  pid: () => number | null;
  /** Count live children (one level) plus the root's reaped children (for PostgreSQL backends). */
  withChildren?: boolean;
}

function childPids(ppid: number): number[] {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const s = readStat(Number(e));
    if (s?.ppid === ppid) out.push(Number(e));
  }
  return out;
}

function seconds(target: CpuTarget): number | null {
  const pid = target.pid();
  if (pid === null) return null;
  const root = readStat(pid);
  if (root === null) return null;
  if (!target.withChildren) return root.own;
  let total = root.own + root.children;
  for (const child of childPids(pid)) total += readStat(child)?.own ?? 0;
  return total;
}

/** Busy CPU seconds of the whole machine (all cores, everything but idle and iowait). */
function machineBusySeconds(): number | null {
  try {
    const first = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const ticks = first.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const busy = ticks.slice(0, 8).reduce((a, b, i) => (i === 3 || i === 4 ? a : a + b), 0);
    return busy / clockTicks();
  } catch {
    return null;
  }
}

export interface CpuSample {
  /**
   * Stop measuring. Percentages of one core: one per target name, `loadgen` for this
   * process, `machine` for the whole machine and `other` for everything else on it
   * (other users of the machine compete with the benchmark for the same cores).
   */
  stop(): Record<string, number | null>;
}

export function startCpuSample(targets: CpuTarget[]): CpuSample {
  const t0 = process.hrtime.bigint();
  const self0 = process.cpuUsage();
  const start = targets.map((t) => seconds(t));
  const machine0 = machineBusySeconds();
  return {
    stop() {
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      const self = process.cpuUsage(self0);
      const out: Record<string, number | null> = { loadgen: round1(((self.user + self.system) / 1e6 / wall) * 100) };
      targets.forEach((t, i) => {
        const a = start[i];
        const b = seconds(t);
        out[t.name] = a === null || a === undefined || b === null ? null : round1(((b - a) / wall) * 100);
      });
      const ours = Object.values(out);
      const machine1 = machineBusySeconds();
      const machine = machine0 === null || machine1 === null ? null : round1(((machine1 - machine0) / wall) * 100);
      out['machine'] = machine;
      const known = ours.every((v) => v !== null);
      out['other'] =
        machine === null || !known
          ? null
          : round1(Math.max(0, machine - ours.reduce<number>((a, b) => a + (b ?? 0), 0)));
      return out;
    },
  };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

/**
 * Wait until the whole machine is nearly idle (busy below `maxBusyPercent` of one core
 * over a 1 s window) or `timeoutMs` passed. Other work on the machine competes with the
 * benchmark for its few cores, so a run is started when that work has settled.
 * Returns the last busy figure seen (null when /proc/stat is unreadable).
 */
export async function waitForQuietMachine(opts: {
  maxBusyPercent: number;
  timeoutMs: number;
  signal?: AbortSignal;
}): Promise<{ busyPercent: number | null; waitedMs: number }> {
  const started = Date.now();
  let busy: number | null = null;
  do {
    opts.signal?.throwIfAborted();
    const a = machineBusySeconds();
    const t0 = process.hrtime.bigint();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const b = machineBusySeconds();
    if (a === null || b === null) return { busyPercent: null, waitedMs: Date.now() - started };
    busy = round1(((b - a) / (Number(process.hrtime.bigint() - t0) / 1e9)) * 100);
    if (busy <= opts.maxBusyPercent) break;
  } while (Date.now() - started < opts.timeoutMs);
  return { busyPercent: busy, waitedMs: Date.now() - started };
}
