/**
 * docs/agent/commands.md, run_scan profile: `full_recon`/`full` → `--full`,
 * `quick`/`quick_recon` → `-P quick_recon`, any other value no mode flag (svc scan's default).
 */
export function profileArgs(profile: string | undefined): string[] {
  if (profile === 'full_recon' || profile === 'full') return ['--full'];
  if (profile === 'quick' || profile === 'quick_recon') return ['-P', 'quick_recon'];
  return [];
}
