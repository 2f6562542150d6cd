import { type Html, html } from './html.ts';
import type { TrendPoint } from './types.ts';

/**
 * The target's risk score over its sessions as an inline SVG line chart (oldest left): the
 * actual score as a solid line, the operational score dashed where known. Accessible: the SVG
 * is an image with a title and a description that states the numbers; each point has its own
 * title (session, date, scores). No points draws an empty frame saying so; one point a dot.
 */

const W = 720;
const H = 260;
const PAD = { left: 44, right: 20, top: 16, bottom: 44 };
const PLOT_W = W - PAD.left - PAD.right;
const PLOT_H = H - PAD.top - PAD.bottom;
/** At most this many date labels under the axis; the points keep their own titles. */
const MAX_X_LABELS = 6;

const round1 = (n: number) => Math.round(n * 10) / 10;
const clamp = (n: number) => Math.min(100, Math.max(0, n));
const dayOf = (iso: string) => (/^\d{4}-\d{2}-\d{2}/.test(iso) ? iso.slice(0, 10) : iso);

export function describeTrend(points: readonly TrendPoint[]): string {
  if (points.length === 0) return 'No sessions of this target have been scored yet.';
  const first = points[0] as TrendPoint;
  const last = points[points.length - 1] as TrendPoint;
  const op = last.risk_score_operational === null ? '' : `, operational ${last.risk_score_operational}`;
  if (points.length === 1)
    return `One session so far (${dayOf(last.finished_at)}): risk score ${last.risk_score}${op}.`;
  const delta = round1(last.risk_score - first.risk_score);
  const change = delta === 0 ? 'unchanged' : delta > 0 ? `up ${delta}` : `down ${-delta}`;
  return (
    `${points.length} sessions from ${dayOf(first.finished_at)} to ${dayOf(last.finished_at)}: ` +
    `risk score ${first.risk_score} at first, ${last.risk_score} in the latest (${change})${op}.`
  );
}

export function trendChart(points: readonly TrendPoint[], target: string): Html {
  const n = points.length;
  const x = (i: number) => round1(n === 1 ? PAD.left + PLOT_W / 2 : PAD.left + (PLOT_W * i) / (n - 1));
  const y = (score: number) => round1(PAD.top + ((100 - clamp(score)) / 100) * PLOT_H);
  const grid = [0, 25, 50, 75, 100].map(
    (v) =>
      html`<line class="trend-grid" x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v)}" y2="${y(v)}"/><text class="trend-axis" x="${PAD.left - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`,
  );
  const step = Math.max(1, Math.ceil(n / MAX_X_LABELS));
  const xLabels = points.map((p, i) =>
    i % step === 0 || i === n - 1
      ? html`<text class="trend-axis" x="${x(i)}" y="${H - PAD.bottom + 18}" text-anchor="${n === 1 ? 'middle' : i === 0 ? 'start' : i === n - 1 ? 'end' : 'middle'}">${dayOf(p.finished_at)}</text>`
      : null,
  );
  const line = (values: (number | null)[], cls: string) => {
    const pts = values.flatMap((v, i) => (v === null ? [] : [`${x(i)},${y(v)}`]));
    return pts.length > 1 ? html`<polyline class="${cls}" points="${pts.join(' ')}"/>` : null;
  };
  const dots = points.map(
    (p, i) =>
      html`<circle class="trend-dot" cx="${x(i)}" cy="${y(p.risk_score)}" r="${n > 60 ? 2 : 4}"><title>${p.session_id} (${dayOf(p.finished_at)}): risk ${p.risk_score}${p.risk_score_operational === null ? '' : `, operational ${p.risk_score_operational}`}</title></circle>`,
  );
  const empty =
    n === 0
      ? html`<text class="trend-axis" x="${PAD.left + PLOT_W / 2}" y="${PAD.top + PLOT_H / 2}" text-anchor="middle">No sessions yet</text>`
      : null;
  const hasOperational = points.some((p) => p.risk_score_operational !== null);
  return html`<svg class="trend-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-labelledby="trend-title trend-desc"><title id="trend-title">Risk score trend for ${target}</title><desc id="trend-desc">${describeTrend(points)}</desc>${grid}<line class="trend-grid" x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${PAD.top + PLOT_H}"/>${xLabels}${line(
    points.map((p) => p.risk_score),
    'trend-line',
  )}${
    hasOperational
      ? line(
          points.map((p) => p.risk_score_operational),
          'trend-line-op',
        )
      : null
  }${dots}${empty}<text class="trend-axis" x="${PAD.left}" y="${H - 8}">Risk score (0 to 100, lower is better)${hasOperational ? '; dashed: operational' : ''}</text></svg>`;
}
