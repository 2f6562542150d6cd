import type { SessionFile } from '@svc/protocol';
import { type Html, html } from '../html.ts';
import { gradeBadge, num, section, table } from './parts.ts';

/** Subnets and their hosts as tables (a graph of 1,000 hosts would not be readable). */
export function topologySection(doc: SessionFile): Html | null {
  const t = doc.topology;
  const nodes = t?.nodes ?? [];
  if (nodes.length === 0) return null;
  const subnets = table(
    ['Subnet', { label: 'Hosts', num: true }, { label: 'Average risk', num: true }],
    (t?.subnets ?? []).map(
      (s) => html`<tr><td>${s.prefix ?? '-'}</td>${num(s.host_count ?? 0)}${num(s.avg_risk ?? null)}</tr>`,
    ),
  );
  const hosts = table(
    ['Host', 'Name', 'Subnet', 'OS', { label: 'Open ports', num: true }, { label: 'Risk', num: true }, 'Grade'],
    nodes.map(
      (n) =>
        html`<tr><td>${n.ip ?? '-'}</td><td>${n.hostname ?? ''}</td><td>${n.subnet ?? ''}</td><td>${n.os_guess ?? ''}</td>${num(n.port_count ?? null)}${num(n.risk_score ?? null)}<td>${gradeBadge(n.risk_grade ?? null)}</td></tr>`,
    ),
  );
  return section('topology', 'Network topology', html`${subnets}<h3>Hosts</h3>${hosts}`);
}
