import type { SessionFile, SessionView } from '@svc/protocol';
import { formatCount, NO_VALUE } from '../ui/format.ts';
import { DataTable } from '../ui/table-wrap.tsx';

/** Coverage per framework: controls the findings map to, out of the framework's total. */
export function Compliance(props: { session: SessionView }) {
  const frameworks = props.session.compliance_summary.by_framework;
  if (frameworks.length === 0) return <p>No compliance mappings in this session.</p>;
  return (
    <DataTable
      label="Compliance by framework"
      columns={['Framework', 'Controls with findings', 'Controls without', 'Findings mapped']}
      stack={{ lead: ['Framework'] }}
    >
      {frameworks.map((f) => (
        <tr key={f.framework}>
          <th scope="row">{f.framework}</th>
          <td>
            {f.mapped_controls}
            {f.total_controls === null ? '' : ` of ${formatCount(f.total_controls)}`}
          </td>
          <td>{f.gap_controls ?? NO_VALUE}</td>
          <td>{formatCount(f.findings_count)}</td>
        </tr>
      ))}
    </DataTable>
  );
}

/** ORC 9.64 readiness (present only when the scanner had it enabled and licensed). */
export function Orc964(props: { session: SessionView; file: SessionFile | null }) {
  const summary = props.session.orc964_summary;
  if (summary === null) return null;
  const block = props.file?.orc_964;
  return (
    <section aria-labelledby="orc-h">
      <h2 id="orc-h">ORC 9.64 readiness</h2>
      <p>
        Technical divisions covered: <strong>{formatCount(summary.technical_covered)}</strong> of{' '}
        {formatCount(summary.technical_total)}. Attestations pending: <strong>{summary.attest_pending}</strong>.
        {block?.deadlines?.applicable
          ? ` Deadline: ${block.deadlines.applicable === 'county_city' ? block.deadlines.county_city : block.deadlines.other}.`
          : ''}
      </p>
      {block?.divisions && block.divisions.length > 0 ? (
        <DataTable label="ORC 9.64 divisions" columns={['Division', 'Name', 'Findings']} stack={{ lead: ['Division'] }}>
          {block.divisions.map((d, i) => (
            <tr key={d.id ?? i}>
              <th scope="row">{d.id ?? NO_VALUE}</th>
              <td>{d.name ?? NO_VALUE}</td>
              <td>{formatCount(d.finding_count ?? 0)}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      {block?.attestations && block.attestations.length > 0 ? (
        <ul>
          {block.attestations.map((a, i) => (
            <li key={a.id ?? i}>
              {a.id} {a.name}: <strong>{a.state ?? 'unknown'}</strong>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
