import { BENCHMARK_METRICS, type BenchmarkMetric, type BenchmarkMetricName } from '@svc/protocol';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { benchmarkMetric, BUCKET_EDGES, bucketOf, MIN_PEERS, type Benchmark } from './benchmark.ts';
import { latestPairMetrics, type MetricRow } from './benchmark-queries.ts';

/** Rows without a client id form one group of their own (they can never be the caller's client). */
const WITHOUT_CLIENT = '\u0000none';
const keyOf = (clientId: string | null) => clientId ?? WITHOUT_CLIENT;

interface MetricIndex {
  /** Peer rows per bucket, all clients. */
  total: number[];
  /** Peer rows per bucket, per client. */
  byClient: Map<string, number[]>;
}

/**
 * The peers of every benchmark between two rebuilds: per metric, how many client/target
 * pairs fall in each bucket, in total and per client. A benchmark subtracts the caller's
 * client and counts buckets, so it costs a few dozen additions whatever the number of
 * sessions, and nothing the caller uploads meanwhile can move it.
 */
export class BenchmarkSnapshot {
  readonly builtAt: Date;
  private readonly pairs: number;
  private readonly pairsByClient = new Map<string, number>();
  private readonly metrics: Record<BenchmarkMetricName, MetricIndex>;

  constructor(rows: readonly MetricRow[], builtAt: Date) {
    this.builtAt = builtAt;
    this.pairs = rows.length;
    const empty = (m: BenchmarkMetricName) => new Array<number>(BUCKET_EDGES[m].length).fill(0);
    this.metrics = Object.fromEntries(
      BENCHMARK_METRICS.map((m) => [m, { total: empty(m), byClient: new Map() }]),
    ) as Record<BenchmarkMetricName, MetricIndex>;
    for (const row of rows) {
      const client = keyOf(row.client_id);
      this.pairsByClient.set(client, (this.pairsByClient.get(client) ?? 0) + 1);
      for (const m of BENCHMARK_METRICS) {
        const value = row[m];
        if (value === null) continue;
        const b = bucketOf(m, value);
        const index = this.metrics[m];
        index.total[b]! += 1;
        let mine = index.byClient.get(client);
        if (mine === undefined) {
          mine = empty(m);
          index.byClient.set(client, mine);
        }
        mine[b]! += 1;
      }
    }
  }

  /** The benchmark of a session with metrics `own` of client `clientId`, against every other client's pairs. */
  compare(clientId: string | null, own: Omit<MetricRow, 'client_id'>, minPeers = MIN_PEERS): Benchmark {
    const client = keyOf(clientId);
    const metric = (m: BenchmarkMetricName): BenchmarkMetric => {
      const { total, byClient } = this.metrics[m];
      const mine = byClient.get(client);
      const others = (b: number) => total[b]! - (mine?.[b] ?? 0);
      const value = own[m];
      let n = 0;
      for (let b = 0; b < total.length; b++) n += others(b);
      // Sessions without a client are peers but no client: they never satisfy the privacy minimum.
      const otherClients =
        byClient.size -
        (mine !== undefined ? 1 : 0) -
        (client !== WITHOUT_CLIENT && byClient.has(WITHOUT_CLIENT) ? 1 : 0);
      if (value === null) return benchmarkMetric(null, { n, worse: 0, equal: 0, otherClients }, minPeers);
      const at = bucketOf(m, value);
      let worse = 0;
      for (let b = at + 1; b < total.length; b++) worse += others(b);
      return benchmarkMetric(value, { n, worse, equal: others(at), otherClients }, minPeers);
    };
    return {
      sample_size: this.pairs - (this.pairsByClient.get(client) ?? 0),
      metrics: Object.fromEntries(BENCHMARK_METRICS.map((m) => [m, metric(m)])) as Record<
        BenchmarkMetricName,
        BenchmarkMetric
      >,
    };
  }
}

/**
 * This process's snapshot (AppContext.benchmarks), in memory: rebuilt from the database, so
 * nothing to migrate or keep consistent.
 */
export class BenchmarkSnapshots {
  #snapshot: BenchmarkSnapshot | null = null;
  #building: Promise<BenchmarkSnapshot> | null = null;

  /**
   * The current snapshot: built by the first benchmark request, then rebuilt by the first
   * request after it is SVC_BENCHMARK_SNAPSHOT_MINUTES old (by the portal's clock).
   * Concurrent requests share one build.
   */
  current(db: Kysely<Database>, now: Date, maxAgeMs: number): Promise<BenchmarkSnapshot> {
    const held = this.#snapshot;
    if (held !== null && now.getTime() - held.builtAt.getTime() < maxAgeMs) return Promise.resolve(held);
    this.#building ??= (async () => {
      const builtAt = now;
      const snapshot = new BenchmarkSnapshot(await latestPairMetrics(db), builtAt);
      this.#snapshot = snapshot;
      return snapshot;
    })().finally(() => (this.#building = null));
    return this.#building;
  }
}
