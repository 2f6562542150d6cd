import { describe, expect, it } from 'vitest';
import { benchmarkMetric, labelOf, MIN_PEERS, percentileOf } from './benchmark.ts';

/** Counts of peers from a list of peer values and the session's value (what the SQL computes). */
function countsOf(mine: number, peers: (number | null)[]) {
  const present = peers.filter((p): p is number => p !== null);
  return {
    n: present.length,
    worse: present.filter((p) => p > mine).length,
    equal: present.filter((p) => p === mine).length,
  };
}

/** countsOf plus otherClients: distinct clients other than `me` among the peers that have the metric (what the SQL computes). */
function clientCountsOf(mine: number, me: string, peers: [client: string, value: number | null][]) {
  const present = peers.filter(([, v]) => v !== null);
  return {
    ...countsOf(
      mine,
      peers.map(([, v]) => v),
    ),
    otherClients: new Set(present.map(([c]) => c).filter((c) => c !== me)).size,
  };
}

describe('percentileOf', () => {
  it('is the share of peers doing worse (higher values), ties counted half', () => {
    expect(percentileOf(countsOf(50, [60, 70, 80, 90]))).toBe(100);
    expect(percentileOf(countsOf(95, [60, 70, 80, 90]))).toBe(0);
    expect(percentileOf(countsOf(75, [60, 70, 80, 90]))).toBe(50);
    expect(percentileOf(countsOf(70, [60, 70, 80, 90]))).toBe(63); // (2 + 0.5) / 4 = 62.5 → 63
    expect(percentileOf(countsOf(10, [10, 10, 10]))).toBe(50);
    expect(percentileOf(countsOf(1, [0, 2, 3]))).toBe(67); // 2/3
    expect(percentileOf(countsOf(2.5, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]))).toBe(80);
  });

  it('is 50 without peers and refuses impossible counts', () => {
    expect(percentileOf({ n: 0, worse: 0, equal: 0 })).toBe(50);
    expect(() => percentileOf({ n: 2, worse: 2, equal: 1 })).toThrow(RangeError);
    expect(() => percentileOf({ n: 2, worse: -1, equal: 0 })).toThrow(RangeError);
  });

  it('stays within 0..100 and grows as the value gets better', () => {
    const peers = Array.from({ length: 37 }, (_, i) => (i * 7) % 23);
    let last = -1;
    for (let v = 30; v >= -1; v--) {
      const p = percentileOf(countsOf(v, peers));
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThanOrEqual(100);
      expect(p).toBeGreaterThanOrEqual(last);
      last = p;
    }
    expect(last).toBe(100);
  });
});

describe('labelOf', () => {
  it('has symmetric bands around 50', () => {
    const cases: [number, string][] = [
      [100, 'Top 10%'],
      [90, 'Top 10%'],
      [89, 'Above average'],
      [60, 'Above average'],
      [59, 'Average'],
      [50, 'Average'],
      [41, 'Average'],
      [40, 'Below average'],
      [11, 'Below average'],
      [10, 'Bottom 10%'],
      [0, 'Bottom 10%'],
    ];
    for (const [p, label] of cases) expect(labelOf(p), String(p)).toBe(label);
  });
});

describe('benchmarkMetric', () => {
  it('gives value, percentile, label and direction', () => {
    expect(benchmarkMetric(20, countsOf(20, [30, 40, 50, 60, 10]))).toEqual({
      value: 20,
      percentile: 80,
      label: 'Above average',
      direction: 'lower_is_better',
      sample_size: 5,
    });
    expect(benchmarkMetric(0, countsOf(0, [1, 2, 3]))).toEqual({
      value: 0,
      percentile: 100,
      label: 'Top 10%',
      direction: 'lower_is_better',
      sample_size: 3,
    });
  });

  it('answers 50 with the reason when there is no comparison', () => {
    expect(MIN_PEERS).toBe(3);
    expect(benchmarkMetric(null, { n: 10, worse: 0, equal: 0 })).toEqual({
      value: null,
      percentile: 50,
      label: 'No data',
      direction: 'lower_is_better',
      sample_size: 10,
    });
    expect(benchmarkMetric(5, { n: 0, worse: 0, equal: 0 })).toEqual({
      value: 5,
      percentile: 50,
      label: 'No peers',
      direction: 'lower_is_better',
      sample_size: 0,
    });
    expect(benchmarkMetric(5, countsOf(5, [9, 9]))).toEqual({
      value: 5,
      percentile: 50,
      label: 'Not enough peers',
      direction: 'lower_is_better',
      sample_size: 2,
    });
    expect(benchmarkMetric(5, countsOf(5, [9, 9]), 2)).toMatchObject({ percentile: 100, label: 'Top 10%' });
  });

  it('needs peers from MIN_PEERS other clients: own other targets count in n but not towards the minimum', () => {
    const notEnough = (value: number, n: number) => ({
      value,
      percentile: 50,
      label: 'Not enough peers',
      direction: 'lower_is_better',
      sample_size: n,
    });
    // Only the caller's own other targets: n = 4, no other client.
    expect(
      benchmarkMetric(
        5,
        clientCountsOf(5, 'a', [
          ['a', 9],
          ['a', 9],
          ['a', 1],
          ['a', 7],
        ]),
      ),
    ).toEqual(notEnough(5, 4));
    // One other client with several peers: n = 5, otherClients 1.
    expect(
      benchmarkMetric(
        5,
        clientCountsOf(5, 'a', [
          ['a', 9],
          ['a', 1],
          ['b', 7],
          ['b', 2],
          ['b', 8],
        ]),
      ),
    ).toEqual(notEnough(5, 5));
    // Two other clients (MIN_PEERS - 1); a third client's peer without the metric does not count.
    const two = clientCountsOf(5, 'a', [
      ['a', 9],
      ['b', 1],
      ['b', 7],
      ['c', 8],
      ['d', null],
    ]);
    expect(two).toEqual({ n: 4, worse: 3, equal: 0, otherClients: 2 });
    expect(benchmarkMetric(5, two)).toEqual(notEnough(5, 4));
    // The same counts by hand, otherClients just below the minimum, whatever n says.
    expect(benchmarkMetric(5, { n: 100, worse: 100, equal: 0, otherClients: MIN_PEERS - 1 })).toEqual(
      notEnough(5, 100),
    );
    expect(benchmarkMetric(5, { n: 100, worse: 100, equal: 0, otherClients: 0 })).toEqual(notEnough(5, 100));
  });

  it('gives the percentile over all peers (own other targets included) once MIN_PEERS other clients have the metric', () => {
    // Exactly 3 other clients; the two own peers count in n, worse and equal: 3 worse (9, 7, 8), 1 tie (5) of 5 → 70.
    const three = clientCountsOf(5, 'a', [
      ['a', 9],
      ['a', 5],
      ['b', 7],
      ['c', 8],
      ['d', 1],
    ]);
    expect(three).toEqual({ n: 5, worse: 3, equal: 1, otherClients: 3 });
    expect(benchmarkMetric(5, three)).toEqual({
      value: 5,
      percentile: 70,
      label: 'Above average',
      direction: 'lower_is_better',
      sample_size: 5,
    });
    expect(benchmarkMetric(5, { n: 3, worse: 0, equal: 0, otherClients: MIN_PEERS })).toMatchObject({
      percentile: 0,
      label: 'Bottom 10%',
    });
    // Without otherClients the minimum applies to n alone (callers that count clients elsewhere).
    expect(benchmarkMetric(5, { n: 3, worse: 3, equal: 0 })).toMatchObject({ percentile: 100, label: 'Top 10%' });
    // A lower minimum applies to other clients too.
    expect(benchmarkMetric(5, { n: 4, worse: 4, equal: 0, otherClients: 2 }, 2)).toMatchObject({
      percentile: 100,
      label: 'Top 10%',
    });
    expect(benchmarkMetric(5, { n: 4, worse: 4, equal: 0, otherClients: 1 }, 2)).toMatchObject({
      percentile: 50,
      label: 'Not enough peers',
    });
  });

  it('"No data" and "No peers" take precedence over the other-clients minimum', () => {
    expect(benchmarkMetric(null, { n: 10, worse: 0, equal: 0, otherClients: 0 })).toMatchObject({
      percentile: 50,
      label: 'No data',
      sample_size: 10,
    });
    expect(benchmarkMetric(5, { n: 0, worse: 0, equal: 0, otherClients: 0 })).toMatchObject({
      percentile: 50,
      label: 'No peers',
      sample_size: 0,
    });
  });
});
