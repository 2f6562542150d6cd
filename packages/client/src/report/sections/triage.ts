import { isFalsePositive, type RemediationEntry, type SessionFile, SEVERITIES } from '@svc/protocol';
import type { Static } from '@sinclair/typebox';
import { type Html, html } from '../html.ts';
import { severityBadge, table, when } from './parts.ts';

/**
 * What the report says of findings that do not count like the others (docs/scanner/report.md):
 * open findings of earlier scans this scan did not look at (remediation_not_checked[]: still
 * open, not in this session's numbers), and findings marked as false positives (left out of both
 * scores). Both are counted apart from accepted risk (exceptions), which stays in the actual score.
 */

type Entry = Static<typeof RemediationEntry> & { port?: unknown; protocol?: unknown };

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const sev = (e: Entry) =>
  (SEVERITIES as readonly unknown[]).includes(e.severity)
    ? severityBadge(e.severity as (typeof SEVERITIES)[number])
    : '-';
const place = (e: Entry) =>
  typeof e.port === 'number' ? `${e.port}/${typeof e.protocol === 'string' ? e.protocol : 'tcp'}` : 'host';

export interface TriageCounts {
  notChecked: number;
  falsePositive: number;
  /** Open findings under an exception that holds (the exceptions stage's `accepted`), false positives aside. */
  accepted: number;
}

export function triageCounts(doc: SessionFile): TriageCounts {
  const open = doc.remediation ?? [];
  return {
    notChecked: (doc.remediation_not_checked ?? []).length,
    falsePositive: open.filter(isFalsePositive).length,
    accepted: open.filter((e) => !isFalsePositive(e) && e.exception_status === 'accepted').length,
  };
}

/** The open items this scan did not look at, with where they are and when they were last seen. */
export function notCheckedBlock(doc: SessionFile): Html | null {
  const items = (doc.remediation_not_checked ?? []) as Entry[];
  if (items.length === 0) return null;
  const rows = items.map(
    (e) =>
      html`<tr><td>${e.title ?? '-'}</td><td>${e.host ?? '-'}</td><td>${place(e)}</td><td>${sev(e)}</td><td>${e.status ?? '-'}</td><td>${e.last_seen ?? '-'}</td><td>${e.note ?? ''}</td></tr>`,
  );
  return html`<h3 id="not-checked">Not checked by this scan</h3><p>${plural(items.length, 'open finding')} of earlier scans ${items.length === 1 ? 'was' : 'were'} not checked: this scan did not look where ${items.length === 1 ? 'it is' : 'they are'} (the host did not answer, or the port was not scanned). ${items.length === 1 ? 'It stays' : 'They stay'} open with ${items.length === 1 ? 'its' : 'their'} status and ${items.length === 1 ? 'is' : 'are'} not in this session's counts or score.</p>${table(['Finding', 'Host', 'Port', 'Severity', 'Status', 'Last seen', 'Note'], rows)}`;
}

/** The open findings marked as false positives: who said so and why. */
export function falsePositiveBlock(doc: SessionFile): Html | null {
  const items = (doc.remediation ?? []).filter(isFalsePositive) as Entry[];
  if (items.length === 0) return null;
  const rows = items.map(
    (e) =>
      html`<tr><td>${e.title ?? '-'}</td><td>${e.host ?? '-'}</td><td>${sev(e)}</td><td>${e.disposition_reason ?? '-'}</td><td>${e.disposition_by ?? '-'}</td><td>${when(e.disposition_at)}</td></tr>`,
  );
  return html`<h3 id="false-positives">False positives</h3><p>${plural(items.length, 'finding')} ${items.length === 1 ? 'is' : 'are'} marked as false positive${items.length === 1 ? '' : 's'}: left out of both risk scores and counted apart from accepted risk.</p>${table(['Finding', 'Host', 'Severity', 'Reason', 'Marked by', 'Marked'], rows)}`;
}

/**
 * One sentence for the executive summary's risk paragraph: false positives and findings not
 * checked, each counted apart from accepted risk (which the scores already state); null when
 * there are neither. Inline, so the one-page summary grows by a line at most.
 */
export function triageNote(doc: SessionFile): Html | null {
  const c = triageCounts(doc);
  if (c.notChecked === 0 && c.falsePositive === 0) return null;
  const parts = [
    c.falsePositive === 0 ? null : `${plural(c.falsePositive, 'false positive')} (out of both scores)`,
    c.notChecked === 0 ? null : `${plural(c.notChecked, 'open finding')} of earlier scans not checked by this scan`,
    c.accepted === 0 ? null : `${plural(c.accepted, 'finding')} of accepted risk (still in the actual score)`,
  ].filter((p) => p !== null);
  return html` <span id="triage-apart">Counted apart: ${parts.join('; ')}.</span>`;
}
