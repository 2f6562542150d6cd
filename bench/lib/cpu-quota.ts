import fs from 'node:fs';
import path from 'node:path';
import { onCleanup } from './cleanup.ts';

/**
 * The default accounting period. The kernel lets a process run flat out until its quota for
 * the period is spent and then stops it for the rest: with the kernel's default of 100 ms, a
 * quarter-core process runs 25 ms and stands still for 75, which no process on a machine of
 * its own does. 10 ms keeps the stops short (at most 7.5 ms at a quarter core) and stays above
 * the 5 ms slices the kernel hands out quota in (sched_cfs_bandwidth_slice_us).
 */
export const DEFAULT_CPU_PERIOD_MS = 10;

/**
 * A CPU budget for one process (Linux cgroups, v2 or v1's cpu controller; needs root): `cores`
 * of CPU time per period, as if it ran on a machine of that size. Its children started later
 * are in the budget too; the process goes back to the root group at cleanup.
 */
export function limitCpu(pid: number, cores: number, name: string, periodMs = DEFAULT_CPU_PERIOD_MS): void {
  const v2 = fs.existsSync('/sys/fs/cgroup/cgroup.controllers');
  const root = v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/cpu';
  if (!fs.existsSync(root)) throw new Error(`no cgroup CPU controller at ${root}: --replica-cpu needs one`);
  const dir = path.join(root, `svc-bench-${name}-${process.pid}`);
  const period = Math.round(periodMs * 1000);
  const quota = Math.round(cores * period);
  if (quota < 1000)
    throw new Error(`a budget of ${cores} cores per ${periodMs} ms is under the kernel's smallest quota (1 ms)`);
  if (v2) fs.writeFileSync(path.join(root, 'cgroup.subtree_control'), '+cpu');
  fs.mkdirSync(dir);
  onCleanup(`remove the CPU budget ${path.basename(dir)}`, () => {
    try {
      for (const p of fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean))
        fs.writeFileSync(path.join(root, 'cgroup.procs'), p);
    } catch {
      // Processes already gone.
    }
    fs.rmdirSync(dir);
  });
  if (v2) fs.writeFileSync(path.join(dir, 'cpu.max'), `${quota} ${period}`);
  else {
    fs.writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(period));
    fs.writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quota));
  }
  fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
}
