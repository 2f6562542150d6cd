import { isFalsePositive, type SessionFile } from '@svc/protocol';
import { type Html, html } from '../html.ts';
import { section, table, when } from './parts.ts';

/**
 * Accepted and expired risk exceptions; an expired one is marked, since it counts in the score
 * again. A false positive is not accepted risk: it is listed with the remediation section's
 * false positives instead (triage.ts).
 */
export function exceptionsSection(doc: SessionFile): Html | null {
  const entries = (doc.remediation ?? []).filter(
    (e) => !isFalsePositive(e) && (e.exception_status === 'accepted' || e.exception_status === 'expired'),
  );
  if (entries.length === 0) return null;
  const rows = entries.map((e) => {
    const expired = e.exception_status === 'expired' || e.exception_expired === true;
    return html`<tr class="${expired ? 'exception-expired' : 'exception-accepted'}"><td>${e.title ?? '-'}</td><td>${e.host ?? '-'}</td><td>${
      expired ? html`<span class="expired">Expired: counts in the score again</span>` : 'Accepted'
    }</td><td>${e.exception_reason ?? '-'}</td><td>${e.exception_approver ?? '-'}</td><td>${when(e.exception_approved_at)}</td><td>${e.exception_expiry ?? 'none'}</td></tr>`;
  });
  const expired = entries.filter((e) => e.exception_status === 'expired' || e.exception_expired === true).length;
  return section(
    'exceptions',
    'Risk exceptions',
    html`<p>${entries.length - expired} accepted, ${expired} expired.</p>${table(['Finding', 'Host', 'Status', 'Reason', 'Approver', 'Approved', 'Expiry'], rows)}`,
  );
}
