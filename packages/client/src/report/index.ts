import type { SessionFile } from '@svc/protocol';
import { execSummary } from './exec-summary.ts';
import { report } from './report.ts';

export { brandingFromEnv } from './branding.ts';

/**
 * The report and executive summary of one session: self-contained HTML files written into the
 * session directory as `report_<name>.html` and `exec_summary_<name>.html`.
 */

/** docs/scanner/report.md, resolved from the environment. */
export interface Branding {
  primaryColor: string;
  headerBg: string;
  headerText: string;
  subtitle: string;
  footerText: string;
  footerEmail: string | null;
  footerUrl: string | null;
  /** The logo embedded as a data URL, or null. */
  logo: { mime: string; base64: string } | null;
}

/** One prior (or the current) session of the same target, oldest first, for the trend chart. */
export interface TrendPoint {
  session_id: string;
  finished_at: string;
  risk_score: number;
  risk_score_operational: number | null;
}

export interface ReportInput {
  doc: SessionFile;
  trend: readonly TrendPoint[];
  branding: Branding;
}

/** The full report: every block of the session, for the technical reader. */
export function renderReport(input: ReportInput): string {
  return report(input);
}

/** One printable page for a manager. */
export function renderExecSummary(input: ReportInput): string {
  return execSummary(input);
}
