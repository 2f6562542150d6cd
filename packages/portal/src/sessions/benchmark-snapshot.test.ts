import { describe, expect, it } from 'vitest';
import { bucketOf, coarsePercentile } from './benchmark.ts';
import type { MetricRow } from './benchmark-queries.ts';
import { BenchmarkSnapshot } from './benchmark-snapshot.ts';

const row = (
  client_id: string | null,
  risk_score: number | null,
  findings_per_host: number | null = null,
  critical_high_ratio: number | null = null,
): MetricRow => ({
  client_id,
  risk_score,
  findings_per_host,
  critical_high_ratio,
});
const own = (risk_score: number | null) => ({ risk_score, findings_per_host: null, critical_high_ratio: null });

describe('buckets and coarse percentiles', () => {
  it('puts a value in the bucket of the last edge not above it', () => {
    expect([0, 9.99, 10, 33, 99, 100, 250].map((v) => bucketOf('risk_score', v))).toEqual([0, 0, 1, 3, 9, 10, 10]);
    expect([-1, 0, 0.49, 0.5, 2, 2.9, 3, 1000].map((v) => bucketOf('findings_per_host', v))).toEqual([
      0, 0, 0, 1, 3, 3, 4, 9,
    ]);
    expect([0, 0.1, 0.15, 0.2, 1].map((v) => bucketOf('critical_high_ratio', v))).toEqual([0, 1, 1, 2, 10]);
  });

  it('rounds percentiles down to tens', () => {
    expect([0, 9, 10, 67, 99, 100].map(coarsePercentile)).toEqual([0, 0, 10, 60, 90, 100]);
  });
});

describe('BenchmarkSnapshot', () => {
  const rows = [row('a', 10), row('a', 95), row('b', 61), row('c', 64), row('d', 33), row('d', null), row(null, 80)];
  const snapshot = new BenchmarkSnapshot(rows, new Date(0));

  it("leaves out every row of the caller's client, in the counts and the sample size", () => {
    const a = snapshot.compare('a', own(50));
    // Peers b 61, c 64, d 33, null-client 80 (d's second pair has no risk): 3 worse of 4 → 75 → 70.
    expect(a.sample_size).toBe(5);
    expect(a.metrics.risk_score).toEqual({
      value: 50,
      percentile: 70,
      label: 'Above average',
      direction: 'lower_is_better',
      sample_size: 4,
    });
    const d = snapshot.compare('d', own(50));
    // Peers a 10, a 95, b 61, c 64, null 80: 4 worse of 5 → 80.
    expect(d.sample_size).toBe(5);
    expect(d.metrics.risk_score.percentile).toBe(80);
  });

  it('answers the same for every value inside one bucket', () => {
    const answers = Array.from({ length: 10 }, (_, i) => snapshot.compare('a', own(60 + i)).metrics.risk_score);
    expect(new Set(answers.map((m) => m.percentile)).size).toBe(1);
  });

  it('needs peers of 3 other clients', () => {
    const two = new BenchmarkSnapshot([row('a', 10), row('b', 20), row('b', 30), row('b', 40)], new Date(0));
    expect(two.compare('c', own(50)).metrics.risk_score.label).toBe('Not enough peers');
    expect(two.compare('a', own(50)).metrics.risk_score.label).toBe('Not enough peers');
  });
});
