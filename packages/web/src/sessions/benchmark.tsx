import type { BenchmarkResponse } from '@svc/protocol';
import { formatScore, label } from '../ui/format.ts';
import { DataTable } from '../ui/table-wrap.tsx';

const METRICS = {
  risk_score: 'Risk score',
  findings_per_host: 'Findings per host',
  critical_high_ratio: 'Critical and high share',
} as const;

/** Where this session stands among the latest session of every other client and target. */
export function Benchmark(props: { benchmark: BenchmarkResponse }) {
  const b = props.benchmark;
  return (
    <>
      <p class="muted small">
        Compared with {b.sample_size} other client and target pairs; lower values are better, a higher percentile means
        more peers do worse.
      </p>
      <DataTable label="Benchmark" columns={['Metric', 'Value', 'Percentile', 'Standing']}>
        {(Object.keys(METRICS) as (keyof typeof METRICS)[]).map((k) => {
          const m = b.metrics[k];
          return (
            <tr key={k}>
              <th scope="row">{METRICS[k]}</th>
              <td>{formatScore(m.value)}</td>
              <td>
                <meter min={0} max={100} value={m.percentile} aria-label={`${METRICS[k]} percentile`} /> {m.percentile}
              </td>
              <td>{label(m.label)}</td>
            </tr>
          );
        })}
      </DataTable>
    </>
  );
}
