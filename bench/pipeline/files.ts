/** What one run of bench/pipeline/run-once.ts writes and reports. */

export interface RunResult {
  mode: 'pipeline' | 'baseline';
  /** Wall time per stage, in the order run, ms. */
  stages: Record<string, number>;
  totalMs: number;
  cpuMs: number;
  maxRssMiB: number;
  /** RSS once the modules are loaded, before the run's work. */
  startRssMiB: number;
  bytes: Record<string, number>;
  findings: number;
  alerts: number;
}

export const REPORT_NAME = 'county-of-example';
export const FILES = {
  json: 'session_results.json',
  log: 'pipeline.log',
  report: `report_${REPORT_NAME}.html`,
  exec: `exec_summary_${REPORT_NAME}.html`,
} as const;
