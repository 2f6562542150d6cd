import type { Finding, SessionFile } from '@svc/protocol';
import { cvesOf, hostOf, portLabel, SEVERITY_RANK, severityOf } from '../facts.ts';
import { type Html, html } from '../html.ts';
import { epssText, kevBadge, referenceLink, section, severityBadge, table } from './parts.ts';

/**
 * Every finding, grouped by weakness (rule id, else title) so its description, advice and
 * references are written once, followed by each affected host and port with the evidence the
 * scanner quoted. Most severe first.
 */

interface Group {
  title: string;
  findings: Finding[];
}

function groupsOf(findings: readonly Finding[]): Group[] {
  const groups = new Map<string, Group>();
  for (const f of findings) {
    const key = f.rule_id?.trim() ? `rule:${f.rule_id.trim()}|${f.title ?? ''}` : `title:${f.title ?? ''}`;
    let g = groups.get(key);
    if (g === undefined) {
      g = { title: f.title?.trim() || f.rule_id?.trim() || 'Untitled finding', findings: [] };
      groups.set(key, g);
    }
    g.findings.push(f);
  }
  const top = new Map(
    [...groups.values()].map((g) => [g, Math.max(...g.findings.map((f) => SEVERITY_RANK[severityOf(f)]))]),
  );
  const rank = (g: Group) => top.get(g) ?? 0;
  return [...groups.values()].sort(
    (a, b) => rank(b) - rank(a) || b.findings.length - a.findings.length || a.title.localeCompare(b.title),
  );
}

function references(f: Finding): Html | null {
  const cves = cvesOf(f);
  const cwes = f.references?.cwe ?? [];
  const urls = f.references?.urls ?? [];
  if (cves.length + cwes.length + urls.length === 0) return null;
  return html`<p><strong>References:</strong> ${[...cves, ...cwes].join(', ')}${
    urls.length === 0
      ? null
      : urls.map((u, i) => html`${i === 0 && cves.length + cwes.length === 0 ? '' : ', '}${referenceLink(u)}`)
  }</p>`;
}

/** CVSS, EPSS and the catalogue date after the rule id. */
function scores(f: Finding): string {
  return [
    typeof f.cvss === 'number' ? `; CVSS ${f.cvss}` : '',
    typeof f.epss === 'number' ? `; ${epssText(f.epss, f.epss_percentile)}` : '',
    f.kev === true
      ? `; in CISA's Known Exploited Vulnerabilities catalogue${f.kev_date_added === undefined ? '' : ` since ${f.kev_date_added}`}`
      : '',
  ].join('');
}

function group(g: Group): Html {
  const first = g.findings[0] as Finding;
  const exploited = g.findings.find((f) => f.kev === true);
  const severity = g.findings.map(severityOf).sort((a, b) => SEVERITY_RANK[b] - SEVERITY_RANK[a])[0] ?? 'info';
  const advice = first.remediation?.trim() || first.solution?.trim() || null;
  const rows = g.findings.map(
    (f) =>
      html`<tr><td>${hostOf(f)}${f.hostname ? html` <span class="muted">(${f.hostname})</span>` : null}</td><td>${portLabel(f)}</td><td>${f.service ?? ''}</td><td>${
        f.evidence ? html`<pre class="evidence">${f.evidence}</pre>` : html`<span class="muted">-</span>`
      }</td></tr>`,
  );
  return html`<article class="finding" data-severity="${severity}"${exploited === undefined ? '' : html` data-kev="true"`}><h3>${g.title} ${severityBadge(severity)}${
    exploited === undefined ? null : html` ${kevBadge(exploited.kev_date_added)}`
  }</h3>${
    first.description ? html`<p>${first.description}</p>` : null
  }${advice === null ? null : html`<p><strong>Remediation:</strong> ${advice}</p>`}${references(first)}${
    first.rule_id ? html`<p class="muted">Rule ${first.rule_id}${scores(exploited ?? first)}</p>` : null
  }${table(['Host', 'Port', 'Service', 'Evidence'], rows)}</article>`;
}

export function findingsSection(doc: SessionFile): Html {
  const findings = doc.findings ?? [];
  if (findings.length === 0) return section('findings', 'Findings', html`<p>The scan found nothing to report.</p>`);
  return section('findings', 'Findings', groupsOf(findings).map(group));
}
