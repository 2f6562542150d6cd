import { type Html, html } from '../html.ts';
import type { TrendPoint } from '../types.ts';
import { trendChart } from '../trend-chart.ts';
import { section } from './parts.ts';

export function trendSection(trend: readonly TrendPoint[], target: string, delta: string | null = null): Html {
  return section(
    'trend',
    'Risk trend',
    html`${delta === null ? null : html`<p id="delta">${delta}</p>`}<figure class="trend">${trendChart(trend, target)}</figure>`,
  );
}
