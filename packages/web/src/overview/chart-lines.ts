import type { OverviewResponse } from '@svc/protocol';
import { formatCount } from '../ui/format.ts';

/** Which targets the risk chart draws, and in which colours. Pure, so it is tested without a browser. */

type Series = OverviewResponse['risk'];

/** Distinguishable on white and for the common colour-vision deficiencies (Okabe-Ito). */
export const COLOURS = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#000000', '#8a6d00'];

/** Lines the chart draws at most: one colour each; more would repeat colours and be told apart by none. */
export const CHART_LINES = COLOURS.length;

/** The targets the chart draws: with more than CHART_LINES, those whose latest scan scored highest (as given otherwise). */
export function drawnSeries(series: Series): Series {
  if (series.length <= CHART_LINES) return series;
  const latest = (s: Series[number]) => s.points.at(-1)?.risk_score ?? 0;
  const chosen = new Set([...series].sort((a, b) => latest(b) - latest(a)).slice(0, CHART_LINES));
  return series.filter((s) => chosen.has(s));
}

/** What the chart and its table hold: every target, or the highest-scoring ones of how many. */
export function riskCaption(days: number, answered: number, targets: number): string {
  const lead = `Risk score of each scan in the last ${days} days, by when the scan ran, one line per target`;
  if (answered <= CHART_LINES && targets <= answered) return `${lead}.`;
  const drawn = Math.min(CHART_LINES, answered);
  const tabled = targets > answered ? `the table lists the ${answered} highest` : `the table lists all ${answered}`;
  return `${lead}: the ${drawn} of ${formatCount(targets)} targets whose latest scan scored highest (${tabled}).`;
}
