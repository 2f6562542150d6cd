import type { Finding } from '@svc/protocol';
import { type Html, html } from '../html.ts';
import { topRisks } from '../top-risks.ts';
import { kevBadge, num, section, severityBadge, someOf, table } from './parts.ts';

/** Detailed top risks for the report. */
export function topRisksSection(findings: readonly Finding[], limit = 10): Html {
  const risks = topRisks(findings, limit);
  if (risks.length === 0) return section('top-risks', 'Top risks', html`<p>No findings above informational.</p>`);
  const items = risks.map(
    (r, i) =>
      html`<div class="finding top-risk"><h3>${i + 1}. ${r.title} ${severityBadge(r.severity)}${r.kev ? html` ${kevBadge()}` : null}</h3><p class="muted">${r.hosts.length} host${r.hosts.length === 1 ? '' : 's'} affected, ${r.findingCount} finding${r.findingCount === 1 ? '' : 's'}${r.cves.length === 0 ? null : html`; ${r.cves.join(', ')}`}</p>${
        r.titles.length > 1 ? html`<p>Merged: ${r.titles.join('; ')}</p>` : null
      }${r.description === null ? null : html`<p><strong>Impact:</strong> ${r.description}</p>`}${
        r.remediation === null ? null : html`<p><strong>Solution:</strong> ${r.remediation}</p>`
      }<p><strong>Affected hosts:</strong> ${someOf(r.hosts)}</p></div>`,
  );
  return section('top-risks', 'Top risks', items);
}

/** The five biggest risks as one compact table, for the executive summary. */
export function topRisksTable(findings: readonly Finding[], limit = 5): Html {
  const risks = topRisks(findings, limit);
  if (risks.length === 0) return html`<p>No findings above informational.</p>`;
  return table(
    ['#', 'Risk', 'Severity', { label: 'Hosts', num: true }],
    risks.map(
      (r, i) =>
        html`<tr><td>${i + 1}</td><td>${r.title}</td><td>${severityBadge(r.severity)}${r.kev ? html` ${kevBadge()}` : null}</td>${num(r.hosts.length)}</tr>`,
    ),
  );
}
