import type { BenchmarkMetric, BenchmarkResponse } from '@svc/protocol';
import { formatAge, formatDate, formatScore, label, secondsSince } from '../ui/format.ts';
import { DataTable } from '../ui/table-wrap.tsx';

const METRICS = {
  risk_score: 'Risk score',
  findings_per_host: 'Findings per host',
  critical_high_ratio: 'Critical and high share',
} as const;

/**
 * Without peers (or with too few other clients' peers, or no value of its own) the portal
 * answers a placeholder percentile of 50 and says why in the label: drawing that as a
 * standing would tell the reader something untrue, so the reason is shown instead.
 */
function Standing(props: { name: string; metric: BenchmarkMetric; minPeers: number }) {
  const m = props.metric;
  if (m.label === 'No data') return <td colSpan={2}>No value in this session</td>;
  if (m.label === 'No peers') return <td colSpan={2}>No peers yet</td>;
  if (m.label === 'Not enough peers')
    return <td colSpan={2}>Not enough peers yet (needs sessions of {props.minPeers} other clients)</td>;
  return (
    <>
      <td>
        <meter min={0} max={100} value={m.percentile} aria-label={`${props.name} percentile`} /> {m.percentile}
      </td>
      <td>{label(m.label)}</td>
    </>
  );
}

/** Where this session stands among the latest session of every other client and target. */
export function Benchmark(props: { benchmark: BenchmarkResponse }) {
  const b = props.benchmark;
  const keys = Object.keys(METRICS) as (keyof typeof METRICS)[];
  return (
    <>
      <p class="muted small">
        {b.sample_size === 0
          ? 'There are no peers yet: no other client and target has a session to compare with.'
          : `Compared with ${b.sample_size} other client and target pairs; lower values are better, a higher percentile means more peers do worse.`}{' '}
        <span class="benchmark-age">
          Peer figures from <time dateTime={b.fetched_at}>{formatDate(b.fetched_at)}</time> (
          {formatAge(secondsSince(b.fetched_at))}).
        </span>
      </p>
      <DataTable
        label="Benchmark figures"
        columns={['Metric', 'Value', 'Percentile', 'Standing']}
        stack={{ lead: ['Metric', 'Standing'] }}
      >
        {keys.map((k) => (
          <tr key={k}>
            <th scope="row">{METRICS[k]}</th>
            <td>{formatScore(b.metrics[k].value)}</td>
            <Standing name={METRICS[k]} metric={b.metrics[k]} minPeers={b.min_sample_size} />
          </tr>
        ))}
      </DataTable>
    </>
  );
}
