import { execSummary } from './exec-summary.ts';
import { report } from './report.ts';
import type { ReportInput } from './types.ts';

export { brandingFromEnv } from './branding.ts';
export type { Branding, ReportInput, TrendPoint } from './types.ts';

/**
 * The report and executive summary of one session: self-contained HTML files written into the
 * session directory as `report_<name>.html` and `exec_summary_<name>.html`.
 */

/** The full report: every block of the session, for the technical reader. */
export function renderReport(input: ReportInput): string {
  return report(input);
}

/** One printable page for a manager. */
export function renderExecSummary(input: ReportInput): string {
  return execSummary(input);
}
