import fs from 'node:fs';

/**
 * A process and everything it started, found through /proc (Linux). A child of the agent leads
 * its own process group, but its own children may lead theirs (the scanner starts nmap that
 * way), so killing one group is not enough: the tree is walked by parent pid.
 */

/** Fields of /proc/<pid>/stat after the command name, which may itself hold spaces and parentheses. */
function statFields(pid: number): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * The process's start time (clock ticks since boot), or null when it is gone. With the pid it
 * names one process for good: a pid reused after a reboot or a wrap has another start time.
 */
export function startTimeOf(pid: number): string | null {
  // Field 22 of stat; the slice above starts at field 3.
  const fields = statFields(pid);
  if (fields === null || fields[0] === 'Z') return null;
  return fields[19] ?? null;
}

function parentsByPid(): Map<number, number> {
  const parents = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(Number(name));
    if (fields !== null) parents.set(Number(name), Number(fields[1]));
  }
  return parents;
}

/** The pid and all its live descendants. */
export function treeOf(root: number): number[] {
  const parents = parentsByPid();
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  }
  return tree.filter((pid) => startTimeOf(pid) !== null);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

/**
 * SIGKILL a process, its descendants and their process groups. The tree is stopped first, so
 * nothing in it can start another process between the walk and the kill, and walked again.
 */
export function killTree(root: number): KilledProcess[] {
  const first = treeOf(root);
  for (const pid of first) signal(pid, 'SIGSTOP');
  const all = new Set([...first, ...treeOf(root)]);
  // Every start time is read before the first kill: a group kill also ends later members of the list.
  const killed: KilledProcess[] = [];
  for (const pid of all) {
    const startTime = startTimeOf(pid);
    if (startTime !== null) killed.push({ pid, startTime });
  }
  for (const pid of all) {
    signal(-pid, 'SIGKILL');
    signal(pid, 'SIGKILL');
  }
  return killed;
}

export interface KilledProcess {
  pid: number;
  startTime: string;
}

/**
 * Resolves once every killed process is gone (a SIGKILLed process lingers until the kernel has
 * torn it down), so a report of the kill is never sent while part of the tree still runs.
 * Bounded: a process stuck in the kernel does not hold the agent up for more than `limitMs`.
 */
export async function untilGone(killed: readonly KilledProcess[], limitMs = 10_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (killed.some((p) => startTimeOf(p.pid) === p.startTime) && Date.now() < end)
    await new Promise((r) => setTimeout(r, 20));
}
