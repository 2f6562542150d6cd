import { median } from '../lib/stats.ts';

/** The optional tools' part of bench/scan.ts: their times from pipeline.log, and the summary of the tools-on runs. */

/** One `svc scan --json` run and what its pipeline.log says. */
export interface SvcRun {
  ms: number;
  /** CPU time, its nmap child's included. */
  cpuMs: number;
  /** The nmap time svc logged: its run of nmap alone. */
  nmapMs: number;
  stages: Record<string, number>;
  tools: Record<string, { ms: number; runs: number }>;
  findings: number;
}

/** Each optional tool's process time in a pipeline.log: its `stage tool <name> <label> <n> ms, exit` lines, summed. */
export function toolTimesOf(log: string): Record<string, { ms: number; runs: number }> {
  const tools: Record<string, { ms: number; runs: number }> = {};
  for (const line of log.split('\n')) {
    const m = /^\S+ stage tool (\S+) (?:.* )?(\d+) ms, exit /.exec(line);
    if (!m) continue;
    const name = m[1] as string;
    const t = tools[name] ?? { ms: 0, runs: 0 };
    tools[name] = { ms: t.ms + Number(m[2]), runs: t.runs + 1 };
  }
  return tools;
}

/**
 * The tools-on runs against the tools-off median: their wall time, what the tools added, and per
 * tool its processes' seconds (medians over the rounds) and its share of the run: the time the
 * tools added, split between them by those seconds. Up to 3 tool processes run at once, so the
 * seconds alone can add up past the run's wall time; the shares add up to what the tools added.
 */
export function summariseTools(toolRuns: readonly SvcRun[], svcMs: number) {
  if (toolRuns.length === 0) return null;
  const wallMs = median(toolRuns.map((r) => r.ms));
  const addedMs = wallMs - svcMs;
  const names = [...new Set(toolRuns.flatMap((r) => Object.keys(r.tools)))];
  const msOf = (name: string) => median(toolRuns.map((r) => r.tools[name]?.ms ?? 0));
  const totalMs = names.reduce((sum, name) => sum + msOf(name), 0);
  const perTool = names.map((name) => ({
    name,
    processes: median(toolRuns.map((r) => r.tools[name]?.runs ?? 0)),
    seconds: msOf(name) / 1000,
    share: totalMs === 0 ? 0 : ((msOf(name) / totalMs) * Math.max(0, addedMs)) / wallMs,
  }));
  return {
    runs: toolRuns.length,
    wallMs,
    addedMs,
    findings: median(toolRuns.map((r) => r.findings)),
    perTool,
  };
}
