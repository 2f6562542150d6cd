import { describe, expect, it } from 'vitest';
import { severityOfCvss } from '@svc/protocol';

/** The CVSS v3 qualitative bands, as the client's scanner and importers and the portal's vulnerability index apply them. */

describe('severityOfCvss', () => {
  it('puts each band edge in its band: 0.1-3.9 low, 4.0-6.9 medium, 7.0-8.9 high, 9.0-10.0 critical', () => {
    const edges: [number, string][] = [
      [0.1, 'low'],
      [3.9, 'low'],
      [4.0, 'medium'],
      [6.9, 'medium'],
      [7.0, 'high'],
      [8.9, 'high'],
      [9.0, 'critical'],
      [10.0, 'critical'],
    ];
    expect(edges.map(([score]) => [score, severityOfCvss(score)])).toEqual(edges);
  });

  it('rates 0.0 ("none" in CVSS) as info', () => {
    expect(severityOfCvss(0)).toBe('info');
  });

  it('puts a score between two bands in the lower one, each band starting at its lower edge', () => {
    expect([3.95, 6.99, 8.95, 0.05].map(severityOfCvss)).toEqual(['low', 'medium', 'high', 'low']);
  });

  it('rates a score below 0 or not a number as info, never throwing', () => {
    expect([-1, -0.1, Number.NaN].map(severityOfCvss)).toEqual(['info', 'info', 'info']);
  });
});
