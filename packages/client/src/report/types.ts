import type { SessionFile } from '@svc/protocol';

/** The inputs of the two HTML files; a leaf, so the sections and the entry point can share them. */

/** The white-label settings of the report, resolved from the environment (branding.ts). */
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
