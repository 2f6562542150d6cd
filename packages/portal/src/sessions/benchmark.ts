import type { BenchmarkLabel, BenchmarkMetric, BenchmarkMetricName } from '@svc/protocol';

// The snapshot's rows, also read by bench/benchmark.ts from here.
export { latestPairMetrics } from './benchmark-queries.ts';

/**
 * Benchmark of one session against its peers (docs/api.md#sessions).
 *
 * Peers: the latest session (by uploaded_at) of every client/target pair of every OTHER
 * client, taken from a snapshot (benchmark-snapshot.ts) that is rebuilt at most every
 * SVC_BENCHMARK_SNAPSHOT_MINUTES. The session's own values are read fresh. All three
 * metrics are "lower is better":
 * - risk_score: the session's risk score;
 * - findings_per_host: total_findings / total_hosts; 0 when the session has neither hosts nor
 *   findings (a scan that found no live host), none when findings exist but no host was counted;
 * - critical_high_ratio: (critical + high) / all findings by severity; 0 when the
 *   session has no findings at all, none when findings exist but none has a severity.
 *
 * Inference: values are compared by bucket (BUCKET_EDGES: steps of 10 risk points, of 0.1
 * in the ratio, a coarse scale for findings per host), so moving one's own value inside a
 * bucket changes nothing and a sweep only learns which bucket a peer is in; the percentile
 * (share of peers in a worse bucket, same bucket counted half) is then rounded DOWN to a
 * multiple of 10, so it does not give exact peer counts either. The caller's client is
 * excluded entirely, and the snapshot does not move between rebuilds, so no upload of the
 * caller's can shift the answer. Labels: `Top 10%` (>= 90), `Above average` (>= 60),
 * `Average` (50), `Below average` (20-40), `Bottom 10%` (<= 10). Without a comparison the
 * percentile is 50 (the field is always a number) and the label says why: `No data` (the session
 * lacks the metric), `No peers` (no peer has it) or `Not enough peers` (peers of fewer than
 * MIN_PEERS other clients have it).
 */
export const MIN_PEERS = 3;

export interface PeerCounts {
  /** Peers that have the metric. */
  n: number;
  /** Peers with a higher (worse) value. */
  worse: number;
  /** Peers with the same value. */
  equal: number;
  /**
   * Distinct clients other than the caller's among the peers that have the metric.
   * The privacy minimum counts these: the caller's own other targets are peers but
   * cannot make up the numbers, or a caller with one other tenant could infer its value.
   * Defaults to `n` for callers that count clients elsewhere.
   */
  otherClients?: number;
}

/** Mid-rank percentile: share of peers doing worse, ties counted half, rounded to an integer. */
export function percentileOf({ n, worse, equal }: PeerCounts): number {
  if (n <= 0) return 50;
  if (worse < 0 || equal < 0 || worse + equal > n) throw new RangeError('peer counts out of range');
  return Math.round((100 * (worse + equal / 2)) / n);
}

/** Percentiles are answered in steps of 10, rounded down: the answer never gives exact peer counts. */
export const PERCENTILE_STEP = 10;

export function coarsePercentile(percentile: number): number {
  return Math.floor(percentile / PERCENTILE_STEP) * PERCENTILE_STEP;
}

/**
 * The lower edges of each metric's buckets. A value belongs to the last edge not above it;
 * values are compared by bucket only. Risk scores and ratios in tenths; findings per host
 * on a rough scale where a difference matters to a reader.
 */
export const BUCKET_EDGES: Record<BenchmarkMetricName, readonly number[]> = {
  risk_score: [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
  findings_per_host: [0, 0.5, 1, 2, 3, 5, 10, 20, 50, 100],
  critical_high_ratio: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1],
};

/** The bucket index of a value (values below the first edge fall in bucket 0). */
export function bucketOf(metric: BenchmarkMetricName, value: number): number {
  const edges = BUCKET_EDGES[metric];
  let b = 0;
  while (b + 1 < edges.length && value >= edges[b + 1]!) b++;
  return b;
}

export function labelOf(percentile: number): Exclude<BenchmarkLabel, 'No peers' | 'Not enough peers' | 'No data'> {
  if (percentile >= 90) return 'Top 10%';
  if (percentile >= 60) return 'Above average';
  if (percentile > 40) return 'Average';
  if (percentile > 10) return 'Below average';
  return 'Bottom 10%';
}

/** One metric of the answer from the session's value and the peer counts. */
export function benchmarkMetric(value: number | null, counts: PeerCounts, minPeers = MIN_PEERS): BenchmarkMetric {
  const base = { value, direction: 'lower_is_better' as const, sample_size: counts.n };
  if (value === null) return { ...base, percentile: 50, label: 'No data' };
  if (counts.n === 0) return { ...base, percentile: 50, label: 'No peers' };
  if (counts.n < minPeers || (counts.otherClients ?? counts.n) < minPeers)
    return { ...base, percentile: 50, label: 'Not enough peers' };
  const percentile = coarsePercentile(percentileOf(counts));
  return { ...base, percentile, label: labelOf(percentile) };
}

export interface Benchmark {
  sample_size: number;
  metrics: Record<BenchmarkMetricName, BenchmarkMetric>;
}
