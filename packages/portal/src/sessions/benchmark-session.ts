import type { AppContext } from '../context.ts';
import { sessionNotFound } from './access.ts';
import type { Benchmark } from './benchmark.ts';
import { sessionMetrics } from './benchmark-queries.ts';
import type { SessionRef } from './queries.ts';

/** The benchmark of one session (its values read now) against the snapshot; a session gone meanwhile is a 404. */
export async function benchmarkSession(ctx: AppContext, ref: SessionRef): Promise<Benchmark> {
  const own = await sessionMetrics(ctx.db, ref);
  if (own === null) throw sessionNotFound();
  const snapshot = await ctx.benchmarks.current(ctx.db, ctx.now(), ctx.config.benchmarkSnapshotMinutes * 60_000);
  return snapshot.compare(own.client_id, own);
}
