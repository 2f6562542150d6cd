import { CompiledQuery } from 'kysely';
import { MAX_COMMANDS_PER_HEARTBEAT, type ReceivedHeartbeat } from '@svc/protocol';
import type { AppContext } from '../context.ts';
import { queryPrepared } from '../db/prepared.ts';
import {
  type BatchedHeartbeat,
  type Claim,
  type ClaimedRow,
  claimOf,
  HEARTBEAT_BATCH_SQL,
  heartbeatBatchValues,
  type ScheduleRevisionColumns,
} from './claim-sql.ts';
import { heartbeatSlowPath } from './first-heartbeat.ts';
import { heartbeatFields, recordHeartbeat, schedulesOf, singleStatement } from './heartbeat.ts';
import type { HeartbeatAnswer, HeartbeatWriter, KeyHolder } from './heartbeat-writer.ts';
import { presentClaim } from './present.ts';

type Answer = HeartbeatAnswer;
type BatchRow = ClaimedRow & ScheduleRevisionColumns & { i: number };

interface Waiting {
  principal: KeyHolder;
  hb: ReceivedHeartbeat;
  now: Date;
  /** (client, agent): at most one heartbeat per agent is being written at a time. */
  agent: string;
  resolve(answer: Answer): void;
  reject(err: unknown): void;
}

/** Batches written at once: one fills while the other commits. */
const BATCHES_IN_FLIGHT = 2;

/**
 * Group commit for heartbeats (docs/decisions.md#batched-heartbeats-group-commit-without-a-timer). Heartbeats
 * that arrive while batches are being written wait and go together as the next batch: one
 * statement and one commit for up to `maxBatch` agents. Nothing waits for a timer: a
 * heartbeat arriving at an idle portal is written at once, alone, by the single statement.
 *
 * Each heartbeat gets what the single path would have answered: the batch statement covers
 * only the common case (a registered agent of a license key); every other heartbeat of the
 * batch (first heartbeat, deregistered, agent limit, takeover) goes on to the single path's
 * slow path, and the legacy key always takes the single path. An agent's heartbeats are
 * written one after the other in arrival order: the next waits until the previous one is
 * answered. A batch statement that fails sends each of its heartbeats down the single path.
 */
export class HeartbeatBatcher implements HeartbeatWriter {
  readonly #ctx: AppContext;
  readonly #maxBatch: number;
  #queue: Waiting[] = [];
  readonly #busy = new Set<string>();
  #inFlight = 0;

  constructor(ctx: AppContext, maxBatch: number) {
    this.#ctx = ctx;
    this.#maxBatch = maxBatch;
  }

  record(principal: KeyHolder, hb: ReceivedHeartbeat): Promise<Answer> {
    if (principal.kind !== 'license' || this.#maxBatch < 2) return recordHeartbeat(this.#ctx, principal, hb);
    const now = this.#ctx.now();
    return new Promise<Answer>((resolve, reject) => {
      this.#queue.push({ principal, hb, now, agent: `${principal.clientId}\u0000${hb.agentId}`, resolve, reject });
      this.#drain();
    });
  }

  #drain(): void {
    while (this.#inFlight < BATCHES_IN_FLIGHT) {
      const batch = this.#take();
      if (batch.length === 0) return;
      this.#inFlight++;
      void this.#write(batch).finally(() => {
        this.#inFlight--;
        this.#drain();
      });
    }
  }

  /** The oldest waiting heartbeats, one per agent and none of an agent still being written. */
  #take(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    for (const w of this.#queue) {
      if (batch.length < this.#maxBatch && !this.#busy.has(w.agent)) {
        this.#busy.add(w.agent);
        batch.push(w);
      } else rest.push(w);
    }
    this.#queue = rest;
    return batch;
  }

  /** Answer one heartbeat from `work`, then let its agent's next heartbeat go. */
  #settle(w: Waiting, work: Promise<Answer>): Promise<void> {
    return work.then(w.resolve, w.reject).finally(() => {
      this.#busy.delete(w.agent);
      this.#drain();
    });
  }

  async #write(batch: Waiting[]): Promise<void> {
    const [only] = batch;
    if (batch.length === 1 && only) {
      await this.#settle(only, recordHeartbeat(this.#ctx, only.principal, only.hb, only.now));
      return;
    }
    let rows: BatchRow[];
    try {
      const beats = batch.map((w): BatchedHeartbeat => heartbeatFields(w.principal, w.hb, w.now));
      rows = await queryPrepared(
        this.#ctx.pool,
        'heartbeat_batch',
        CompiledQuery.raw(HEARTBEAT_BATCH_SQL, heartbeatBatchValues(beats, MAX_COMMANDS_PER_HEARTBEAT)),
      );
    } catch (err) {
      // Nothing of the batch was written (one statement): each heartbeat goes its own way.
      this.#ctx.logger.warn(
        { err: { message: (err as Error).message }, heartbeats: batch.length },
        'heartbeat batch failed; writing its heartbeats one by one',
      );
      for (const w of batch) void this.#settle(w, recordHeartbeat(this.#ctx, w.principal, w.hb, w.now));
      return;
    }
    this.#ctx.metrics?.heartbeatBatch(batch.length);
    const rowsOf = new Map<number, BatchRow[]>();
    for (const r of rows) {
      const mine = rowsOf.get(r.i) ?? [];
      mine.push(r);
      rowsOf.set(r.i, mine);
    }
    for (const [i, w] of batch.entries()) {
      const mine = rowsOf.get(i);
      // Not a registered agent of this key: the single path's rules decide, under the row's lock.
      const work: Promise<Answer> = mine
        ? Promise.resolve({ receivedAt: w.now, ...presentClaim(claimOf(mine)), schedules: schedulesOf(mine[0]) })
        : heartbeatSlowPath(this.#ctx, w.principal, w.hb, w.now, singleStatement(w.principal, w.hb, w.now)).then(
            (claim: Claim) => ({ receivedAt: w.now, ...presentClaim(claim), schedules: null }),
          );
      void this.#settle(w, work);
    }
  }
}
