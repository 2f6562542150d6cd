import { POSTURE_FILTERS, type PostureCount, type PostureTarget } from '@svc/protocol';
import { findingsHref } from '../portfolio/portfolio-model.ts';

/**
 * The overview's posture in links and words. Pure, so the links are tested without a browser.
 * Each count links to the portfolio page with exactly the filter the portal counted
 * (protocol POSTURE_FILTERS), through the portfolio page's own address builder.
 */

export const COUNT_LABELS: Record<PostureCount, { column: string; words: (n: number) => string }> = {
  critical: { column: 'Critical', words: (n) => `open critical ${n === 1 ? 'finding' : 'findings'}` },
  high: { column: 'High', words: (n) => `open high ${n === 1 ? 'finding' : 'findings'}` },
  overdue: { column: 'Overdue', words: (n) => `overdue ${n === 1 ? 'finding' : 'findings'}` },
  kev: { column: 'KEV', words: (n) => `open ${n === 1 ? 'finding' : 'findings'} on the KEV list` },
};

/** The portfolio page listing what a count counts, in one client or one of its targets. */
export function countHref(count: PostureCount, clientId: string, target?: string): string {
  const filter: Record<string, string> = { client_id: clientId, ...(POSTURE_FILTERS[count] as Record<string, string>) };
  if (target !== undefined) filter['target'] = target;
  return findingsHref(filter);
}

/** The latest score of a target's trend and how it moved since the scan before, in words. */
export function trendText(trend: PostureTarget['trend']): string {
  const last = trend.at(-1);
  if (last === undefined) return 'No scored scan';
  const score = Math.round(last.risk_score);
  const grade = last.risk_grade === null ? '' : ` ${last.risk_grade}`;
  const before = trend.at(-2);
  if (before === undefined) return `${score}${grade}, first scored scan`;
  const delta = Math.round(last.risk_score - before.risk_score);
  const move = delta === 0 ? 'unchanged' : delta > 0 ? `up ${delta}` : `down ${-delta}`;
  return `${score}${grade}, ${move} since the scan before`;
}

/** Points of a sparkline (x by position, y by score 0–100) in a width × height box. */
export function sparkPoints(trend: PostureTarget['trend'], width: number, height: number): string {
  if (trend.length === 0) return '';
  const step = trend.length === 1 ? 0 : width / (trend.length - 1);
  return trend
    .map((p, i) => {
      const x = trend.length === 1 ? width / 2 : i * step;
      const y = height - (Math.max(0, Math.min(100, p.risk_score)) / 100) * height;
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
}
