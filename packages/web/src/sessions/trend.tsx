import { sessionHref } from '@svc/protocol';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatDate, formatScore } from '../ui/format.ts';
import { DataTable } from '../ui/table-wrap.tsx';
import { scanTimeOf, type TrendSession } from './scan-time.ts';

const HEIGHT = 240;
/** Axis text in CSS pixels: the canvas is drawn at the width it is shown at, so this is what the reader gets. */
const AXIS_FONT_PX = 12;

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** uPlot options in the page's current colours (light or dark theme). */
function chartOptions(width: number, hasOperational: boolean): uPlot.Options {
  const ink = cssVar('--muted', '#4a4f5c');
  const grid = cssVar('--line', '#d5d8de');
  const font = `${AXIS_FONT_PX}px system-ui, sans-serif`;
  const axis = { stroke: ink, font, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { show: false },
    scales: { x: { time: true }, y: { range: [0, 100] } },
    axes: [
      { ...axis, space: 90 },
      { ...axis, size: 44, splits: () => [0, 25, 50, 75, 100] },
    ],
    series: [
      {},
      { label: 'Actual risk', stroke: cssVar('--accent', '#1d4ed8'), width: 2.5, points: { size: 7 } },
      {
        label: 'Operational risk',
        show: hasOperational,
        stroke: cssVar('--ok', '#067647'),
        width: 2,
        dash: [6, 4],
        points: { show: false },
      },
      {
        label: 'This session',
        stroke: cssVar('--danger', '#b42318'),
        fill: cssVar('--danger', '#b42318'),
        paths: () => null,
        points: { show: true, size: 13 },
      },
    ],
  };
}

/** The chart itself: uPlot on a canvas as wide as its box, redrawn on resize and on a theme change. */
function TrendChart(props: { data: uPlot.AlignedData; hasOperational: boolean; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    let plot: uPlot | null = null;
    const draw = () => {
      plot?.destroy();
      plot = new uPlot(chartOptions(Math.max(200, el.clientWidth), props.hasOperational), props.data, el);
    };
    draw();
    const resize = new ResizeObserver(() => {
      const width = Math.max(200, el.clientWidth);
      if (plot !== null && plot.width !== width) plot.setSize({ width, height: HEIGHT });
    });
    resize.observe(el);
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    scheme.addEventListener('change', draw);
    return () => {
      scheme.removeEventListener('change', draw);
      resize.disconnect();
      plot?.destroy();
    };
  }, [props.data, props.hasOperational]);
  return <div ref={box} class="trend-chart" role="img" aria-label={props.label} />;
}

/**
 * Risk over the target's sessions in the order the scans ran, as a line (actual score, and
 * the operational score where exceptions lower it), with the same numbers as a table for
 * screen readers and for reading exact values.
 */
export function Trend(props: { sessions: TrendSession[]; current: string }) {
  const points = props.sessions
    .filter((s) => s.risk_score !== null)
    .map((s) => ({ s, at: scanTimeOf(s) }))
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || a.s.session_id.localeCompare(b.s.session_id));
  if (points.length < 2) return <p>Not enough sessions of this target for a trend yet ({points.length}).</p>;
  const actual = points.map((p) => p.s.risk_score);
  const operational = points.map((p) => p.s.exception_summary.risk_score_operational);
  const hasOperational = operational.some((v, i) => v !== null && v !== actual[i]);
  const data: uPlot.AlignedData = [
    points.map((p) => Date.parse(p.at) / 1000),
    actual,
    operational,
    points.map((p) => (p.s.session_id === props.current ? p.s.risk_score : null)),
  ];
  const title =
    `Risk score over ${points.length} scans, from ${formatScore(actual[0])} on ${formatDate(points[0]!.at)} ` +
    `to ${formatScore(actual.at(-1))} on ${formatDate(points.at(-1)!.at)}`;
  return (
    <figure class="trend">
      <TrendChart data={data} hasOperational={hasOperational} label={title} />
      <figcaption class="muted small">
        By scan time. Solid: actual risk score
        {hasOperational ? '; dashed: operational (accepted exceptions left out)' : ''}. Larger dot: this session.
      </figcaption>
      <details>
        <summary>Trend as a table</summary>
        <DataTable
          label="Trend"
          columns={['Session', 'Scanned', 'Uploaded', 'Risk score', 'Operational']}
          stack={{ lead: ['Risk score', 'Session'] }}
        >
          {points.map(({ s, at }) => (
            <tr key={`${s.client_id ?? ''}/${s.session_id}`}>
              <td>
                <a href={sessionHref(s.session_id, s.client_id)}>{s.session_id}</a>
              </td>
              <td>{formatDate(at)}</td>
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
