import type { SessionFile } from '@svc/protocol';
import { complianceRows } from '../facts.ts';
import { type Html, html } from '../html.ts';
import { num, section, table } from './parts.ts';

/**
 * Compliance gaps: per framework, the controls the findings show as not met (mapped
 * controls), against the framework's control total, then each such control with its finding
 * count.
 */
export function complianceSection(doc: SessionFile): Html | null {
  const entries = doc.compliance ?? [];
  if (entries.length === 0) return null;
  const summary = table(
    [
      'Framework',
      { label: 'Controls with findings', num: true },
      { label: 'Controls in framework', num: true },
      { label: 'Controls without findings', num: true },
      { label: 'Findings', num: true },
    ],
    complianceRows(doc).map(
      (r) =>
        html`<tr><td>${r.framework}</td>${num(r.mapped_controls)}${num(r.total_controls)}${num(r.gap_controls)}${num(r.findings_count)}</tr>`,
    ),
  );
  const byFramework = new Map<string, typeof entries>();
  for (const e of entries) {
    const key = e.framework ?? 'Other';
    byFramework.set(key, [...(byFramework.get(key) ?? []), e]);
  }
  const details = [...byFramework].map(
    ([framework, list]) =>
      html`<h3>${framework}</h3>${table(
        ['Control', 'Name', { label: 'Findings', num: true }],
        list.map(
          (e) =>
            html`<tr><td>${e.control_id ?? '-'}</td><td>${e.control_name ?? ''}</td>${num(e.finding_ids?.length ?? 0)}</tr>`,
        ),
      )}`,
  );
  return section('compliance', 'Compliance gaps', html`${summary}${details}`);
}
