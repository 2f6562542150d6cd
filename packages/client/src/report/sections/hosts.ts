import type { Finding, SessionFile } from '@svc/protocol';
import { hostOf, portLabel, SEVERITY_RANK, severityOf } from '../facts.ts';
import { type Html, html } from '../html.ts';
import { gradeBadge, section, severityBadge, table } from './parts.ts';

/** One table per host (riskiest first): its ports and services and what was found on each. */
export function hostsSection(doc: SessionFile): Html {
  const byHost = new Map<string, Finding[]>();
  for (const f of doc.findings ?? []) {
    const h = hostOf(f);
    const list = byHost.get(h);
    if (list === undefined) byHost.set(h, [f]);
    else list.push(f);
  }
  const nodes = new Map((doc.topology?.nodes ?? []).map((n) => [n.ip ?? '', n]));
  for (const ip of nodes.keys()) if (ip !== '' && !byHost.has(ip)) byHost.set(ip, []);
  if (byHost.size === 0) return section('hosts', 'Hosts', html`<p>No hosts were found.</p>`);
  const risk = (ip: string) => nodes.get(ip)?.risk_score ?? -1;
  const hosts = [...byHost.keys()].sort((a, b) => risk(b) - risk(a) || a.localeCompare(b, 'en', { numeric: true }));
  const blocks = hosts.map((ip) => {
    const node = nodes.get(ip);
    const findings = (byHost.get(ip) ?? []).sort(
      (a, b) => SEVERITY_RANK[severityOf(b)] - SEVERITY_RANK[severityOf(a)] || (a.port ?? -1) - (b.port ?? -1),
    );
    const name = node?.hostname ?? findings.find((f) => f.hostname)?.hostname ?? null;
    const facts = [
      node?.os_guess ? `OS: ${node.os_guess}` : null,
      typeof node?.port_count === 'number' ? `${node.port_count} open port${node.port_count === 1 ? '' : 's'}` : null,
    ].filter((x) => x !== null);
    return html`<div class="host"><h3>${ip}${name === null ? null : html` <span class="muted">(${name})</span>`}${
      typeof node?.risk_score === 'number'
        ? html` · risk ${node.risk_score} ${gradeBadge(node.risk_grade ?? null)}`
        : null
    }</h3>${facts.length === 0 ? null : html`<p class="muted">${facts.join(' · ')}</p>`}${
      findings.length === 0
        ? html`<p class="muted">No findings.</p>`
        : table(
            ['Port', 'Service', 'Severity', 'Finding'],
            findings.map(
              (f) =>
                html`<tr><td>${portLabel(f)}</td><td>${f.service ?? ''}</td><td>${severityBadge(severityOf(f))}</td><td>${f.title ?? f.rule_id ?? 'Untitled finding'}</td></tr>`,
            ),
          )
    }</div>`;
  });
  return section('hosts', 'Hosts', blocks);
}
