import {
  isFalsePositive,
  REMEDIATION_STATUSES,
  type RemediationEntry,
  type SessionFile,
  SEVERITIES,
} from '@svc/protocol';
import type { Static } from '@sinclair/typebox';
import { type Html, html } from '../html.ts';
import { num, section, severityBadge, table, when } from './parts.ts';
import { falsePositiveBlock, notCheckedBlock } from './triage.ts';

type Entry = Static<typeof RemediationEntry>;

const sev = (e: Entry) =>
  (SEVERITIES as readonly unknown[]).includes(e.severity)
    ? severityBadge(e.severity as (typeof SEVERITIES)[number])
    : '-';

const STATUS_LABELS: Readonly<Record<(typeof REMEDIATION_STATUSES)[number], string>> = {
  new: 'New',
  persistent: 'Persistent',
  in_progress: 'In progress',
  resolved: 'Resolved',
  deferred: 'Deferred',
};

/** New means first seen in this session; anything older persists. */
export const isNew = (e: Entry, sessionId: string) => e.first_seen === undefined || e.first_seen === sessionId;

/**
 * The delta against the prior scan (docs/scanner/report.md): new, reopened (resolved before,
 * seen again), still open, resolved, and not checked (where this scan did not look); null
 * without tracking. Reopened and not checked are named only when there are any.
 */
export function deltaText(doc: SessionFile, sessionId: string): string | null {
  if (doc.remediation === undefined && doc.remediation_resolved === undefined) return null;
  const open = doc.remediation ?? [];
  const newCount = open.filter((e) => isNew(e, sessionId)).length;
  const reopened = open.filter((e) => !isNew(e, sessionId) && e.prior_status === 'resolved').length;
  const notChecked = (doc.remediation_not_checked ?? []).length;
  return `${newCount} new since the prior scan, ${reopened === 0 ? '' : `${reopened} reopened, `}${open.length - newCount - reopened} persistent, ${(doc.remediation_resolved ?? []).length} resolved${notChecked === 0 ? '' : `, ${notChecked} not checked by this scan`}.`;
}

export function remediationSection(doc: SessionFile, sessionId: string): Html | null {
  const open = doc.remediation ?? [];
  const resolved = doc.remediation_resolved ?? [];
  if (open.length === 0 && resolved.length === 0 && doc.remediation === undefined) return null;
  // Resolved items live in remediation_resolved[]; the counts cover both lists, as remediation_summary does.
  const all = [...open, ...resolved];
  const byStatus = REMEDIATION_STATUSES.map((s) => [s, all.filter((e) => e.status === s).length] as const);
  const rows = open.map(
    (e) =>
      html`<tr><td>${e.title ?? '-'}</td><td>${e.host ?? '-'}</td><td>${sev(e)}</td><td>${isNew(e, sessionId) ? 'New' : e.prior_status === 'resolved' ? 'Reopened' : 'Persistent'}</td><td>${e.status ?? '-'}${isFalsePositive(e) ? ' (false positive)' : ''}</td><td>${e.first_seen ?? '-'}</td><td>${e.prior_status ?? '-'}</td><td>${e.note ?? ''}</td></tr>`,
  );
  const resolvedRows = resolved.map(
    (e) =>
      html`<tr><td>${e.title ?? '-'}</td><td>${e.host ?? '-'}</td><td>${sev(e)}</td><td>${e.first_seen ?? '-'}</td><td>${e.prior_status ?? '-'}</td><td>${when(e.status_changed)}</td></tr>`,
  );
  return section(
    'remediation',
    'Remediation tracking',
    html`<p>${deltaText(doc, sessionId)}</p>${table(
      REMEDIATION_STATUSES.map((s) => ({ label: STATUS_LABELS[s], num: true as const })),
      [html`<tr>${byStatus.map(([, n]) => num(n))}</tr>`],
    )}${table(['Finding', 'Host', 'Severity', 'New / persistent', 'Status', 'First seen', 'Prior status', 'Note'], rows)}${
      resolved.length === 0
        ? null
        : html`<h3>Resolved since the prior scan</h3>${table(['Finding', 'Host', 'Severity', 'First seen', 'Prior status', 'Resolved'], resolvedRows)}`
    }${notCheckedBlock(doc)}${falsePositiveBlock(doc)}`,
  );
}
