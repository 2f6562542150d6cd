import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { type BlobStore, BlobStoreUnavailableError } from '../blobs/store.ts';
import type { Database } from '../db/schema.ts';
import { fileKeysOfAllSessions } from './queries.ts';

/**
 * One pass over the blob store, page by page: remove unfinished uploads and files no session
 * row references. The referenced keys are read once per pass, when the first page has
 * candidates, so after the store fixed its age cutoff: a file whose row is committed after the
 * read was written less than the grace period before that commit (uploads end within it), so
 * after the cutoff, and is not a candidate.
 */
export async function sweepOrphanedFiles(
  db: Kysely<Database>,
  blobs: BlobStore,
  signal?: AbortSignal,
): Promise<number> {
  let all: Promise<Set<string>> | null = null;
  const { removed } = await blobs.sweep(
    async (keys) => {
      all ??= fileKeysOfAllSessions(db).then((rows) => new Set(rows));
      const referenced = await all;
      return new Set(keys.filter((k) => referenced.has(k)));
    },
    { signal },
  );
  return removed;
}

export interface OrphanSweepTiming {
  /** Between two passes that succeeded. */
  everyMs: number;
  /** The first retry after a failed pass; each further failure doubles it, up to `retryMaxMs`. */
  retryFirstMs: number;
  retryMaxMs: number;
}

export const ORPHAN_SWEEP_TIMING: OrphanSweepTiming = { everyMs: 3_600_000, retryFirstMs: 10_000, retryMaxMs: 600_000 };

export interface OrphanSweeper {
  /** Cancel the pass in flight (between pages, or its listing) and plan no other. */
  stop(): Promise<void>;
}

/**
 * The orphan sweep in the background (docs/s3-storage.md): a first pass at
 * once, then hourly. It never holds the start or a request: a store that is slow, huge or down
 * only delays the sweep. A failed pass is logged and retried with a growing, bounded delay
 * (jittered, so replicas do not retry in step against a store coming back).
 */
export function startOrphanSweeper(
  run: (signal: AbortSignal) => Promise<number>,
  logger: Logger,
  timing: OrphanSweepTiming = ORPHAN_SWEEP_TIMING,
): OrphanSweeper {
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | null = null;
  let pass: Promise<void> = Promise.resolve();
  let failures = 0;

  const plan = (ms: number) => {
    if (!stopping.signal.aborted) timer = setTimeout(start, ms).unref();
  };
  const start = () => {
    timer = null;
    pass = run(stopping.signal).then(
      (removed) => {
        // One line per pass (hourly): what went, and whether it had been failing.
        logger.info({ removed, ...(failures > 0 ? { failed_passes: failures } : {}) }, 'orphaned file sweep done');
        failures = 0;
        plan(timing.everyMs);
      },
      (err: unknown) => {
        if (stopping.signal.aborted) return;
        failures++;
        const ceiling = Math.min(timing.retryMaxMs, timing.retryFirstMs * 2 ** Math.min(failures - 1, 30));
        const delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
        logger.warn(
          {
            err: err instanceof BlobStoreUnavailableError ? err.cause : err,
            failed_passes: failures,
            retry_in_ms: delay,
          },
          'orphaned file sweep failed, will retry',
        );
        plan(delay);
      },
    );
  };
  start();
  return {
    async stop() {
      stopping.abort(new Error('the portal is stopping'));
      if (timer !== null) clearTimeout(timer);
      await pass;
    },
  };
}
