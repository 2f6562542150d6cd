import type { SessionView } from '@svc/protocol';
import { formatDate, formatScore } from '../ui/format.ts';
import { sessionHref } from './links.ts';
import { DataTable } from '../ui/table-wrap.tsx';

const W = 640;
const H = 220;
const PAD = { left: 40, right: 16, top: 12, bottom: 28 };

/**
 * Risk over the target's sessions, oldest to newest, as an inline SVG line (actual score,
 * and the operational score where exceptions lower it), with the same numbers as a table
 * for screen readers and for reading exact values.
 */
export function Trend(props: { sessions: SessionView[]; current: string }) {
  const points = props.sessions
    .filter((s) => s.risk_score !== null)
    .sort((a, b) => a.uploaded_at.localeCompare(b.uploaded_at));
  if (points.length < 2) return <p>Not enough sessions of this target for a trend yet ({points.length}).</p>;
  const x = (i: number) => PAD.left + (i * (W - PAD.left - PAD.right)) / (points.length - 1);
  const y = (v: number) => PAD.top + ((100 - v) * (H - PAD.top - PAD.bottom)) / 100;
  const line = (vals: (number | null)[]) =>
    vals
      .map((v, i) => (v === null ? null : `${x(i).toFixed(1)},${y(v).toFixed(1)}`))
      .filter((p) => p !== null)
      .join(' ');
  const actual = points.map((s) => s.risk_score);
  const operational = points.map((s) => s.exception_summary.risk_score_operational);
  const hasOperational = operational.some((v, i) => v !== null && v !== actual[i]);
  return (
    <figure class="trend">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="trend-title">
        <title id="trend-title">
          Risk score over {points.length} sessions, from {formatScore(actual[0])} to {formatScore(actual.at(-1))}
        </title>
        {[0, 25, 50, 75, 100].map((v) => (
          <g key={v}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} class="grid" />
            <text x={PAD.left - 6} y={y(v) + 4} text-anchor="end" class="axis">
              {v}
            </text>
          </g>
        ))}
        <polyline points={line(actual)} class="series-actual" />
        {hasOperational ? <polyline points={line(operational)} class="series-operational" /> : null}
        {points.map((s, i) => (
          <circle
            key={s.session_id}
            cx={x(i)}
            cy={y(s.risk_score!)}
            r={s.session_id === props.current ? 6 : 4}
            class={s.session_id === props.current ? 'point-current' : 'point'}
          >
            <title>{`${s.session_id}: ${formatScore(s.risk_score)}`}</title>
          </circle>
        ))}
        <text x={PAD.left} y={H - 6} class="axis">
          {formatDate(points[0]!.uploaded_at)}
        </text>
        <text x={W - PAD.right} y={H - 6} text-anchor="end" class="axis">
          {formatDate(points.at(-1)!.uploaded_at)}
        </text>
      </svg>
      <figcaption class="muted small">
        Solid: actual risk score{hasOperational ? '; dashed: operational (accepted exceptions left out)' : ''}. Larger
        dot: this session.
      </figcaption>
      <details>
        <summary>Trend as a table</summary>
        <DataTable label="Trend" columns={['Session', 'Uploaded', 'Risk score', 'Operational']}>
          {points.map((s) => (
            <tr key={s.session_id}>
              <td>
                <a href={sessionHref(s.session_id, s.client_id)}>{s.session_id}</a>
              </td>
              <td>{formatDate(s.uploaded_at)}</td>
              <td>{formatScore(s.risk_score)}</td>
              <td>{formatScore(s.exception_summary.risk_score_operational)}</td>
            </tr>
          ))}
        </DataTable>
      </details>
    </figure>
  );
}
