import fs from 'node:fs';
import path from 'node:path';
import { onCleanup } from './cleanup.ts';

/**
 * A CPU budget for one process (Linux cgroups, v2 or v1's cpu controller; needs root): `cores`
 * of CPU time per period, as if it ran on a machine of that size. Its children started later
 * are in the budget too; the process goes back to the root group at cleanup.
 */
export function limitCpu(pid: number, cores: number, name: string): void {
  const v2 = fs.existsSync('/sys/fs/cgroup/cgroup.controllers');
  const root = v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/cpu';
  if (!fs.existsSync(root)) throw new Error(`no cgroup CPU controller at ${root}: --replica-cpu needs one`);
  const dir = path.join(root, `svc-bench-${name}-${process.pid}`);
  const period = 100_000;
  const quota = Math.max(1000, Math.round(cores * period));
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
