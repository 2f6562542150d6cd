import type { Kysely } from 'kysely';
import { pipelined } from '../db/bulk.ts';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import type { IndexRow } from './findings-index.ts';
import {
  clearPendingIndex,
  deleteIndexRows,
  indexStatements,
  notePendingIndex,
  pendingIndexesOlderThan,
} from './findings-index-queries.ts';
import { indexState } from './findings-queries.ts';
import { lockSessionKey, type SessionRef } from './queries.ts';

/**
 * The findings index of a large new session, written beside its upload's transaction
 * (docs/findings-of-record.md#the-index-written-beside): on a second connection, in a
 * transaction of its own, while the upload's writes the findings of record, so that PostgreSQL
 * works on both at once instead of one after the other (bench/README.md, "Sessions of many
 * findings"). Those rows commit first and belong to no session until the upload's transaction
 * commits the index's state row: every read of the index goes through a stored session or its
 * target's latest one, so none sees them before. They are noted as pending in their own commit;
 * the upload's transaction removes the note in the one that publishes them, and rows whose note
 * outlives their upload are dropped (by the upload itself when it fails, else by the sweep).
 */

/** Index rows from which a second connection and commit pay for themselves. */
export const BESIDE_MIN_ROWS = 2_000;

/** The writer's pool, apart from the portal's so an upload holding one never waits on the other for its second (docs/deployment-replicas.md). */
export const INDEX_WRITER_CONNECTIONS = 2;

/** How long a pending note may stand before the sweep takes its upload for gone: far longer than any upload's commit. */
const PENDING_GRACE_SECONDS = 600;

/** Where an upload's index is written beside it, and who hears whether it was (when it failed, it is written in the upload's transaction). */
export interface BesideWriter {
  writer: Kysely<Database>;
  written: () => void;
  failed: (err: unknown) => void;
}

/**
 * The writer for an upload, or null for one that writes its index in its own transaction: a
 * session already stored (its published index is replaced in the same commit), a small one, or
 * every writer connection busy (an upload does not queue for one).
 */
export function writerFor(
  ctx: Pick<AppContext, 'indexWriter' | 'logger' | 'metrics'>,
  upload: { newSession: boolean; rows: number },
): BesideWriter | null {
  const handle = ctx.indexWriter;
  if (handle === null || !upload.newSession || upload.rows < BESIDE_MIN_ROWS) return null;
  const { pool } = handle;
  const free = pool.waitingCount === 0 && (pool.idleCount > 0 || pool.totalCount < INDEX_WRITER_CONNECTIONS);
  if (!free) {
    ctx.metrics?.indexWritten('busy');
    return null;
  }
  return {
    writer: handle.db,
    written: () => ctx.metrics?.indexWritten('beside'),
    failed: (err) => {
      ctx.metrics?.indexWritten('failed');
      ctx.logger.warn(
        { err },
        'could not write the findings index on a second connection; written in the upload transaction',
      );
    },
  };
}

/**
 * Writes a new session's index on `writer` and commits it, noted as pending. The upload's
 * transaction holds the session's lock, so no other upload of it writes meanwhile: rows found
 * are those of an earlier upload of the id that never published them.
 */
export function writeIndexBeside(
  writer: Kysely<Database>,
  ref: SessionRef,
  rows: Iterable<IndexRow>,
  total: number,
): Promise<void> {
  return writer.transaction().execute(async (side) => {
    await notePendingIndex(side, ref);
    await deleteIndexRows(side, ref);
    await pipelined<Database>(side, indexStatements(ref, rows, total));
  });
}

/**
 * Drops the rows of an index written beside an upload that did not publish them, unless an
 * upload of the session has published its own since (it replaced them). Under the session's
 * lock, so never while an upload of it is in flight. True when rows were dropped.
 */
export async function dropUnpublishedIndex(db: Kysely<Database>, ref: SessionRef): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await lockSessionKey(trx, ref);
    // A state row: the rows, if any, are published.
    const published = (await indexState(trx, ref)) !== undefined;
    if (!published) await deleteIndexRows(trx, ref);
    await clearPendingIndex(trx, ref);
    return !published;
  });
}

/** Drops every unpublished index noted more than the grace period ago: uploads whose portal stopped between the two commits. */
export async function sweepUnpublishedIndexes(
  db: Kysely<Database>,
  graceSeconds = PENDING_GRACE_SECONDS,
): Promise<number> {
  const PAGE = 100;
  let dropped = 0;
  for (;;) {
    // Each drop removes its note, so every page is new.
    const refs = await pendingIndexesOlderThan(db, graceSeconds, PAGE);
    for (const ref of refs) if (await dropUnpublishedIndex(db, ref)) dropped++;
    if (refs.length < PAGE) return dropped;
  }
}
