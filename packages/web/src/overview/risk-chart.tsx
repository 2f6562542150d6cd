import type { OverviewResponse } from '@svc/protocol';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatDate, formatScore } from '../ui/format.ts';
import { COLOURS } from './chart-lines.ts';

type Series = OverviewResponse['risk'];

/** 12 px: chart text stays readable on a phone (at least 11 px). */
const FONT = '12px system-ui, sans-serif';
const HEIGHT = 280;

export const clientName = (s: Series[number]) => s.client ?? s.client_id ?? 'no client';
export const seriesName = (s: Series[number]) => `${clientName(s)} · ${s.target ?? 'no target'}`;

/** One x axis for every target: the union of their scan times (seconds), each series null where it has no scan. */
export function alignedData(series: Series): uPlot.AlignedData {
  const times = [...new Set(series.flatMap((s) => s.points.map((p) => Date.parse(p.scanned_at) / 1000)))].sort(
    (a, b) => a - b,
  );
  const index = new Map(times.map((t, i) => [t, i] as const));
  return [
    times,
    ...series.map((s) => {
      const ys: (number | null)[] = times.map(() => null);
      for (const p of s.points) ys[index.get(Date.parse(p.scanned_at) / 1000) as number] = p.risk_score;
      return ys;
    }),
  ];
}

/** What the chart shows, in words, for screen readers. */
function describe(series: Series): string {
  return series
    .map((s) => {
      const first = s.points[0];
      const last = s.points.at(-1);
      if (first === undefined || last === undefined) return '';
      return `${seriesName(s)}: ${s.points.length} ${s.points.length === 1 ? 'scan' : 'scans'}, risk ${formatScore(first.risk_score)} on ${formatDate(first.scanned_at)} to ${formatScore(last.risk_score)} on ${formatDate(last.scanned_at)}`;
    })
    .join('; ');
}

/** Risk score over scan time, one line per target; the data table below it is the accessible alternative. */
export function RiskChart(props: { series: Series }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const axis = { font: FONT, labelFont: FONT, stroke: '#1a1a2e', grid: { stroke: '#e4e6ea' } };
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: HEIGHT,
        scales: { y: { range: [0, 100] } },
        axes: [{ ...axis }, { ...axis, label: 'Risk score', size: 56 }],
        legend: { live: false },
        series: [
          {},
          ...props.series.map((s, i) => {
            const stroke = COLOURS[i % COLOURS.length];
            return {
              label: seriesName(s),
              ...(stroke === undefined ? {} : { stroke }),
              width: 2,
              spanGaps: true,
              points: { size: 7 },
            };
          }),
        ],
      },
      alignedData(props.series),
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.series]);
  return (
    <div ref={box} class="risk-chart" role="img" aria-label={`Risk over time by scan. ${describe(props.series)}`} />
  );
}
