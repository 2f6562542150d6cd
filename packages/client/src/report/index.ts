import type { SessionFile } from '@svc/protocol';

/**
 * The report and executive summary of one session: self-contained HTML files written into the
 * session directory as `report_<name>.html` and `exec_summary_<name>.html`.
 */

/** SPEC.md "Report white-label configuration", resolved from the environment. */
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

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, input: ReportInput): string {
  const m = input.doc.metadata;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(String(m?.target ?? ''))}</p><section id="consultation-section" class="consultation-section"><button id="scheduleBtn" type="button">Schedule a consultation</button></section></body></html>\n`;
}

export function renderReport(input: ReportInput): string {
  return page('Vulnerability report', input);
}

export function renderExecSummary(input: ReportInput): string {
  return page('Executive summary', input);
}
