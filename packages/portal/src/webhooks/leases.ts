import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.ts';
import { type ExpiredDelivery, lockExpired, renewLeases, type Settlement, settleExpired } from './lease-queries.ts';

/** Deliveries this process has taken over and is still sending, at most; a sweep takes no more. */
const MAX_TAKEN_IN_FLIGHT = 200;

/** Why a delivery ended `abandoned`, logged as its last attempt's error (shown to everyone as is). */
export const ABANDONED = {
  runs: (runs: number) =>
    `abandoned: ${runs === 1 ? 'its run' : `${runs} runs`} ended without an outcome (the replica sending it stopped first)`,
  disabled: 'abandoned: the subscription is disabled',
  moved: 'abandoned: the subscription now belongs to another client',
} as const;

export interface SweepOutcome {
  /** Delivery ids taken over by this sweep (their runs go on in the background). */
  taken: string[];
  abandoned: string[];
}

export type Verdict = { kind: 'take' } | { kind: 'abandon'; reason: string } | { kind: 'drop' };

/**
 * What becomes of a delivery whose lease expired. Taken over only where a redelivery would go
 * now (its subscription enabled, and of no client or of the event's: assertRedeliverable's
 * rule), and while it has runs left; otherwise it ends `abandoned`, visible in the log. One
 * finished already (by a replica of an older version) only loses its lease.
 */
export function verdictFor(
  d: Pick<ExpiredDelivery, 'status' | 'runs' | 'enabled' | 'client_id' | 'subscription_client_id'>,
  maxRuns: number,
): Verdict {
  if (d.status !== 'pending') return { kind: 'drop' };
  if (d.runs >= maxRuns) return { kind: 'abandon', reason: ABANDONED.runs(d.runs) };
  if (!d.enabled) return { kind: 'abandon', reason: ABANDONED.disabled };
  if (d.subscription_client_id !== null && d.subscription_client_id !== d.client_id)
    return { kind: 'abandon', reason: ABANDONED.moved };
  return { kind: 'take' };
}

/** A random owner name per process: hostname and pid alone repeat across containers. */
export const newOwner = () => `${os.hostname().slice(0, 40)}:${process.pid}:${randomBytes(4).toString('hex')}`;

export interface DeliveryLeasesDeps {
  db: Kysely<Database>;
  logger: Logger;
  now: () => Date;
  owner: string;
  seconds: number;
  maxRuns: number;
  /** Send a delivery taken over as run `run` (its lease is held from the start) and record its outcome. */
  resume: (delivery: ExpiredDelivery, run: number) => Promise<void>;
  /** Fan out the events staged and left unsent by a process that stopped (after each sweep of leases). */
  adopt: () => Promise<unknown>;
  onAbandoned?: () => void;
}

/**
 * The leases of this process's deliveries in flight (migration 0019). Each delivery is written
 * with a lease of `seconds`, renewed every third of it while it runs and deleted with its
 * outcome. A process that dies (kill -9, a crash, a lost host) stops renewing; once its lease
 * expires, the sweep of any replica, every half lease, takes the delivery over and sends it
 * again with the same event id and body (receivers de-duplicate on `webhook-id`), up to
 * `maxRuns` runs in all, after which it ends `abandoned`. Several replicas sweep one database
 * at once: the claim locks with SKIP LOCKED, so each expired lease goes to one of them.
 */
export class DeliveryLeases {
  readonly #d: DeliveryLeasesDeps;
  /** Deliveries in flight here, by id: how many runs of each (a run of ours can be taken over by ourselves). */
  readonly #held = new Map<string, number>();
  readonly #taken = new Set<Promise<void>>();
  #renewTimer: NodeJS.Timeout | null = null;
  #sweepTimer: NodeJS.Timeout | null = null;
  #renewing: Promise<void> | null = null;
  #sweeping: Promise<SweepOutcome> | null = null;
  /** The timer's round: the sweep of leases, then the staged events (shutdown waits for it). */
  #round: Promise<void> | null = null;
  #stopped = false;

  constructor(deps: DeliveryLeasesDeps) {
    this.#d = deps;
  }

  get owner(): string {
    return this.#d.owner;
  }

  get seconds(): number {
    return this.#d.seconds;
  }

  /** A delivery of this process is on its way: keep its lease. */
  hold(id: string): void {
    this.#held.set(id, (this.#held.get(id) ?? 0) + 1);
  }

  /** Its outcome is written (the lease went with it), or could not be: renewing ends, and a sweep takes it over. */
  release(id: string): void {
    const n = (this.#held.get(id) ?? 1) - 1;
    if (n > 0) this.#held.set(id, n);
    else this.#held.delete(id);
  }

  /** Renew every third of a lease; sweep at once (a restarted replica's own leftovers), then every half lease. */
  start(): void {
    const ms = this.#d.seconds * 1000;
    this.#renewTimer = setInterval(() => void this.renew(), ms / 3).unref();
    const sweep = () => {
      this.#round ??= this.sweep()
        .then(() => (this.#stopped ? undefined : this.#d.adopt()))
        .then(() => undefined)
        .finally(() => (this.#round = null));
    };
    this.#sweepTimer = setInterval(sweep, ms / 2).unref();
    sweep();
  }

  /** Work this process took over (a delivery's run, a staged event's fan-out): shutdown waits for it. */
  track(
    task: Promise<void>,
    failed: (err: unknown) => void = (err) => this.#d.logger.error({ err }, 'webhook event taken over failed'),
  ): void {
    const tracked = task.catch(failed).finally(() => this.#taken.delete(tracked));
    this.#taken.add(tracked);
  }

  /** Push the leases of every delivery in flight here forward (skipped while the last renewal still runs). */
  renew(): Promise<void> {
    if (this.#held.size === 0) return Promise.resolve();
    this.#renewing ??= renewLeases(this.#d.db, this.#d.owner, [...this.#held.keys()], this.#d.seconds)
      .then(() => undefined)
      .catch((err: unknown) => this.#d.logger.warn({ err }, 'renewing webhook delivery leases failed'))
      .finally(() => (this.#renewing = null));
    return this.#renewing;
  }

  /**
   * Take over or abandon deliveries whose lease expired. Answers what this sweep decided (the
   * runs it started go on in the background); a sweep already running is joined, not repeated.
   */
  sweep(): Promise<SweepOutcome> {
    const none: SweepOutcome = { taken: [], abandoned: [] };
    const room = MAX_TAKEN_IN_FLIGHT - this.#taken.size;
    if (this.#stopped || room <= 0) return Promise.resolve(none);
    this.#sweeping ??= this.#sweepOnce(room)
      .catch((err: unknown) => {
        this.#d.logger.warn({ err }, 'taking over webhook deliveries with expired leases failed');
        return none;
      })
      .finally(() => (this.#sweeping = null));
    return this.#sweeping;
  }

  async #sweepOnce(limit: number): Promise<SweepOutcome> {
    const { db, logger, maxRuns, owner, seconds } = this.#d;
    const { rows, settlement, runs } = await db.transaction().execute(async (trx) => {
      const locked = await lockExpired(trx, limit);
      const s: Settlement = { take: [], abandon: [], drop: [] };
      // Shutting down: leave them to the other replicas (nothing here would be sent any more).
      if (!this.#stopped)
        for (const row of locked) {
          const v = verdictFor(row, maxRuns);
          if (v.kind === 'take') s.take.push(row.id);
          else if (v.kind === 'abandon') s.abandon.push({ id: row.id, reason: v.reason });
          else s.drop.push(row.id);
        }
      return { rows: locked, settlement: s, runs: await settleExpired(trx, s, { owner, seconds }, this.#d.now()) };
    });
    for (const a of settlement.abandon) {
      const row = rows.find((r) => r.id === a.id);
      logger.warn(
        { delivery_id: a.id, subscription_id: row?.subscription_id, event_id: row?.event_id, reason: a.reason },
        'webhook delivery abandoned',
      );
      this.#d.onAbandoned?.();
    }
    for (const row of rows) {
      const run = runs.get(row.id);
      if (run === undefined) continue;
      logger.info(
        { delivery_id: row.id, subscription_id: row.subscription_id, event_id: row.event_id, run },
        'webhook delivery taken over: the lease of the replica sending it expired',
      );
      this.hold(row.id);
      this.track(
        this.#d.resume(row, run).finally(() => this.release(row.id)),
        (err) => logger.error({ err, delivery_id: row.id }, 'webhook delivery taken over failed'),
      );
    }
    return { taken: settlement.take, abandoned: settlement.abandon.map((a) => a.id) };
  }

  /** Shutdown, first: no more takeovers (what this process would take now could not be sent). */
  stopTakingOver(): void {
    this.#stopped = true;
    if (this.#sweepTimer) clearInterval(this.#sweepTimer);
  }

  /** Shutdown, after the event fan-outs drained: let the runs taken over finish, renewing their leases, then stop. */
  async close(): Promise<void> {
    this.stopTakingOver();
    await this.#sweeping;
    await this.#round;
    while (this.#taken.size > 0) await Promise.allSettled([...this.#taken]);
    if (this.#renewTimer) clearInterval(this.#renewTimer);
    await this.#renewing;
  }
}
