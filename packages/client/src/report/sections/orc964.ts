import type { SessionFile } from '@svc/protocol';
import { type Html, html } from '../html.ts';
import { num, section, table } from './parts.ts';

const STATE_LABELS: Readonly<Record<string, string>> = {
  true: 'Attested',
  false: 'Not met',
  unknown: 'Not yet attested',
};

/** ORC 9.64 readiness, only when the session carries the block (present only when enabled). */
export function orc964Section(doc: SessionFile): Html | null {
  const orc = doc.orc_964;
  if (orc === undefined || orc === null) return null;
  const d = orc.deadlines ?? {};
  const applicable = d.applicable === 'county_city' ? d.county_city : d.other;
  const cov = orc.coverage ?? {};
  return section(
    'orc-964',
    'Ohio Revised Code 9.64 readiness',
    html`<p>Compliance deadline: <strong>${applicable ?? '-'}</strong> (${d.applicable === 'county_city' ? 'county or city' : 'other political subdivision'}). Technical divisions with findings: ${cov.technical_divisions_covered ?? 0} of ${cov.technical_divisions_total ?? 5}.</p>${table(
      ['Division', 'Name', 'Findings mapped', { label: 'Findings', num: true }],
      (orc.divisions ?? []).map(
        (v) =>
          html`<tr><td>${v.id ?? '-'}</td><td>${v.name ?? ''}</td><td>${v.mapped ? 'Yes' : 'No'}</td>${num(v.finding_count ?? 0)}</tr>`,
      ),
    )}<h3>Attestations</h3>${table(
      ['Item', 'Requirement', 'State', 'Note'],
      (orc.attestations ?? []).map(
        (a) =>
          html`<tr><td>${a.id ?? '-'}</td><td>${a.name ?? ''}</td><td>${STATE_LABELS[a.state ?? 'unknown'] ?? a.state}</td><td>${a.note ?? ''}</td></tr>`,
      ),
    )}`,
  );
}
