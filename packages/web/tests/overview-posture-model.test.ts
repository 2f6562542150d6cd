import type { OverviewResponse } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { viewOf } from '../src/portfolio/portfolio-model.ts';
import { countHref, sparkPoints, trendText } from '../src/overview/posture-model.ts';
import { CHART_LINES, drawnSeries, riskCaption } from '../src/overview/chart-lines.ts';

/** The overview's links into the portfolio page and its trend in words. */

const point = (session_id: string, risk_score: number, risk_grade: string | null = null) => ({
  session_id,
  scanned_at: '2026-01-01T00:00:00.000Z',
  risk_score,
  risk_grade,
});

describe('overview posture model', () => {
  it('links each count to the portfolio page with the filter the portal counted', () => {
    expect(countHref('critical', 'acme')).toBe(
      '/console/findings?client_id=acme&severity=critical&status=open&exception=none%2Cexpired&disposition=none',
    );
    expect(countHref('overdue', 'acme', '10.0.0.0/24')).toBe(
      '/console/findings?client_id=acme&target=10.0.0.0%2F24&overdue=true',
    );
    // The portfolio page reads back exactly these filters.
    const href = countHref('kev', 'a&b', 'net one');
    const view = viewOf(Object.fromEntries(new URL(href, 'http://x').searchParams));
    expect(view.filter).toEqual({
      client_id: 'a&b',
      target: 'net one',
      kev: 'true',
      status: 'open',
      exception: 'none,expired',
      disposition: 'none',
    });
  });

  it('says where a target’s risk went since the scan before', () => {
    expect(trendText([])).toBe('No scored scan');
    expect(trendText([point('a', 56.4, 'C')])).toBe('56 C, first scored scan');
    expect(trendText([point('a', 72, 'D'), point('b', 56, 'C')])).toBe('56 C, down 16 since the scan before');
    expect(trendText([point('a', 40), point('b', 45)])).toBe('45, up 5 since the scan before');
    expect(trendText([point('a', 40), point('b', 40)])).toBe('40, unchanged since the scan before');
  });

  it('draws the sparkline in its box, 0 at the bottom and 100 at the top', () => {
    expect(sparkPoints([point('a', 0), point('b', 100)], 80, 24)).toBe('0.0,24.0 80.0,0.0');
    expect(sparkPoints([point('a', 50)], 80, 24)).toBe('40.0,12.0');
    expect(sparkPoints([], 80, 24)).toBe('');
  });
});

describe('risk chart lines', () => {
  const series = (n: number): OverviewResponse['risk'] =>
    Array.from({ length: n }, (_, i) => ({
      client_id: 'c',
      client: null,
      target: `t${i}`,
      points: [{ ...point(`s${i}`, (i * 37) % 100), target: `t${i}` }],
    }));

  it('draws every target up to one line per colour, else those whose latest scan scored highest, in order', () => {
    expect(drawnSeries(series(CHART_LINES))).toHaveLength(CHART_LINES);
    const many = series(20);
    const drawn = drawnSeries(many);
    expect(drawn).toHaveLength(CHART_LINES);
    const lowestDrawn = Math.min(...drawn.map((s) => s.points[0]?.risk_score ?? 0));
    const left = many.filter((s) => !drawn.includes(s));
    expect(left.every((s) => (s.points[0]?.risk_score ?? 0) <= lowestDrawn)).toBe(true);
    // In the order given (by client, then target).
    expect(drawn.map((s) => many.indexOf(s))).toEqual([...drawn.map((s) => many.indexOf(s))].sort((a, b) => a - b));
  });

  it('says which targets the risk chart and its table hold', () => {
    const lead = 'Risk score of each scan in the last 90 days, by when the scan ran, one line per target';
    expect(riskCaption(90, 3, 3)).toBe(`${lead}.`);
    expect(riskCaption(90, 12, 12)).toBe(
      `${lead}: the ${CHART_LINES} of 12 targets whose latest scan scored highest (the table lists all 12).`,
    );
    // The portal answered the 20 highest of 4,000: the table holds those 20, the chart the highest of them.
    expect(riskCaption(90, 20, 4000)).toBe(
      `${lead}: the ${CHART_LINES} of 4,000 targets whose latest scan scored highest (the table lists the 20 highest).`,
    );
    expect(riskCaption(30, 0, 0)).toBe(
      'Risk score of each scan in the last 30 days, by when the scan ran, one line per target.',
    );
  });
});
