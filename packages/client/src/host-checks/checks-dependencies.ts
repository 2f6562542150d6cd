import type { CheckResult } from './check-result.ts';
import { runProgram } from './process.ts';
import { missingOf, type ToolSpec, type ToolStatus } from './tools.ts';

/** The host readiness checks of the scanner programs: required, core and optional tools. */

export interface NmapRun {
  /** First line of `nmap --version`, e.g. "7.93". */
  version: string | null;
  /** Why nmap did not run, when it did not. */
  error?: string;
}

const capabilityList = (tools: ToolSpec[]) => tools.map((t) => `${t.capability} (${t.id})`).join('; ');

/**
 * Required (nmap) missing or not running: fail. A core tool missing: warn, naming the lost
 * capability. Otherwise pass.
 */
export function coreDependenciesRule(statuses: ToolStatus[], nmap: NmapRun | null): CheckResult {
  const name = 'core dependencies';
  const relevant = statuses.filter((s) => s.spec.tier === 'required' || s.spec.tier === 'core');
  const missingRequired = missingOf(relevant, 'required');
  const missingCore = missingOf(relevant, 'core');
  const fix = [...missingRequired, ...missingCore];
  const coreNote =
    missingCore.length > 0
      ? `; missing core tools: ${missingCore.map((t) => t.id).join(', ')}, losing ${capabilityList(missingCore)}`
      : '';
  if (missingRequired.length > 0)
    return {
      name,
      status: 'fail',
      detail: `missing required: ${missingRequired.map((t) => t.id).join(', ')} (nothing can be scanned without it)${coreNote}`,
      fix,
    };
  const nmapStatus = relevant.find((s) => s.spec.id === 'nmap');
  if (nmapStatus?.path && nmap !== null && nmap.version === null)
    return {
      name,
      status: 'fail',
      detail: `nmap (${nmapStatus.path}) does not run: ${nmap.error ?? 'no version in its output'}${coreNote}`,
      fix,
    };
  const nmapText = nmapStatus?.path ? `nmap ${nmap?.version ?? ''}`.trim() + ` (${nmapStatus.path})` : 'nmap';
  if (missingCore.length > 0) return { name, status: 'warn', detail: `${nmapText}${coreNote}`, fix };
  const core = relevant.filter((s) => s.spec.tier === 'core').map((s) => s.spec.id);
  return { name, status: 'pass', detail: `${nmapText}; core tools present: ${core.join(', ')}` };
}

/** All optional tools present: pass; otherwise warn, listing the skipped capabilities. */
export function optionalDependenciesRule(statuses: ToolStatus[]): CheckResult {
  const name = 'optional dependencies';
  const optional = statuses.filter((s) => s.spec.tier === 'optional');
  const missing = missingOf(optional);
  const present = optional.filter((s) => s.path !== null).map((s) => s.spec.id);
  if (missing.length === 0)
    return { name, status: 'pass', detail: `all ${optional.length} optional tools present: ${present.join(', ')}` };
  const presentNote = present.length > 0 ? ` (present: ${present.join(', ')})` : '';
  return {
    name,
    status: 'warn',
    detail: `${missing.length} of ${optional.length} missing${presentNote}; skipped capabilities: ${capabilityList(missing)}`,
  };
}

/** The version from `nmap --version` output ("Nmap version 7.93 ( https://nmap.org )"). */
export function nmapVersionOf(output: string): string | null {
  return /Nmap version (\S+)/i.exec(output)?.[1] ?? null;
}

export async function nmapRun(nmapPath: string | null, env: NodeJS.ProcessEnv): Promise<NmapRun | null> {
  if (nmapPath === null) return null;
  const r = await runProgram(nmapPath, ['--version'], { env, timeoutMs: 10_000 });
  const version = r.code === 0 ? nmapVersionOf(r.stdout) : null;
  return version !== null
    ? { version }
    : { version: null, error: r.error ?? (r.stderr.trim().split('\n')[0] || `exit ${r.code}`) };
}
