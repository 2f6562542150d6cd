import { coverageBlock, coverageOf, type FindingChange, sessionCoverage, type TriageSummary } from '@svc/protocol';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { pipelined } from '../db/bulk.ts';
import type { Database } from '../db/schema.ts';
import type { Uploader } from '../records/claims.ts';
import { evidenceOf } from '../records/evidence.ts';
import { mergeUpload } from '../records/merge.ts';
import {
  ensureTargetRow,
  historyStatements,
  lockTarget,
  recordsOfTarget,
  recordStatements,
  setLastSession,
  type TargetRef,
  targetRow,
} from '../records/queries.ts';
import { dueDaysOf } from '../records/settings.ts';
import { endOfFindings, indexRowCount, indexRowsIn, missingRowsOf, viewBlocksOf } from './findings-index.ts';
import { clearPendingIndex, indexStatements, resetFindingsIndex, setIndexState } from './findings-index-queries.ts';
import { type BesideWriter, writeIndexBeside } from './index-beside.ts';
import type { SessionRef } from './queries.ts';
import { applyTriageChanges, countsOf, recountSession } from './triage-counts-queries.ts';
import { rescoreSessions } from './triage-rescore.ts';
import { summaryOfCounts } from './triage-view.ts';

/**
 * An upload merged into the findings of record of its target, inside the upload's transaction
 * (docs/findings-of-record.md#merge): the records change as records/merge.ts says, the session is
 * indexed with what it did to each finding and with the records it resolved or did not check,
 * the sessions of the target that hold a record whose triage changed are counted again, and
 * the session's own numbers are computed from its findings as they stand now.
 */

export interface MergedUpload {
  counts: Record<FindingChange, number>;
  /** The session's numbers after the merge (null: it has no finding to count). */
  triage: TriageSummary | null;
}

/** The record target of a session: its target as uploaded, '' when it names none. */
export const recordTarget = (target: string | null): string => (target ?? '').trim();

export async function mergeIntoRecords(
  trx: Kysely<Database>,
  c: {
    ref: SessionRef;
    target: string;
    /** The session file, durable once this settles (commit.ts); the index state names its key. */
    file: Promise<{ key: string }>;
    doc: unknown;
    uploader: Uploader;
    scannedAt: Date;
    now: Date;
    /** Where the session's index is written beside this transaction (index-beside.ts, writerFor); null: in it. */
    beside: BesideWriter | null;
  },
): Promise<MergedUpload> {
  const t: TargetRef = { clientId: c.ref.clientId, target: c.target };
  await lockTarget(trx, t);
  const reads = Promise.all([recordsOfTarget(trx, t), dueDaysOf(trx, t.clientId), targetRow(trx, t)]);
  // Reported by its own await below, never as unhandled.
  reads.catch(() => undefined);
  // The file's findings are read while PostgreSQL looks up the target's records (once sent).
  await nextTurn();
  const evidence = evidenceOf(c.doc);
  const [existing, { dueDays }, target] = await reads;
  // A new target's row is made here, in the upload's transaction, so a refused upload leaves none.
  if (target === undefined) await ensureTargetRow(trx, t, c.now);
  const coverage = sessionCoverage(c.doc);
  const latestCoverage = target?.last_coverage == null ? null : coverageOf({ coverage: target.last_coverage });
  const merged = mergeUpload(t.clientId, t.target, existing, evidence, {
    sessionId: c.ref.sessionId,
    scannedAt: c.scannedAt,
    now: c.now,
    coverage,
    uploader: c.uploader,
    dueDays,
    latest:
      target?.last_session_id == null || target.last_scanned_at === null || latestCoverage === null
        ? null
        : { sessionId: target.last_session_id, scannedAt: target.last_scanned_at, coverage: latestCoverage },
  });
  await setLastSession(trx, t, {
    sessionId: c.ref.sessionId,
    scannedAt: c.scannedAt,
    // What it looked at, as a block (a file without one: the hosts it names, every port).
    coverage: coverageBlock({
      hosts: coverage.hosts,
      ports: coverage.ports,
      profile: coverage.profile ?? undefined,
      tools: coverage.tools,
      source: coverage.inferred ? 'inferred' : (coverage.source ?? undefined),
      notChecked: coverage.notChecked.values(),
    }),
    now: c.now,
  });
  const total = indexRowCount(c.doc) + merged.missing.length;
  const index = async () => ({ fileKey: (await c.file).key, total, ...viewBlocksOf(c.doc) });
  const rowsOf = function* () {
    yield* indexRowsIn(c.doc, merged.seen);
    yield* missingRowsOf(merged.missing, endOfFindings(c.doc));
  };
  // Streams of statements, each built (the index rows made from the file) while the ones before it run (db/bulk.ts).
  const records = (function* () {
    yield* recordStatements(merged.rows);
    yield* historyStatements(t, merged.history);
  })();
  if (c.beside === null) {
    await resetFindingsIndex(trx, c.ref, await index());
    await pipelined(
      trx,
      (function* () {
        yield* records;
        yield* indexStatements(c.ref, rowsOf(), total);
      })(),
    );
  } else {
    // Both settle before either failure is reported, so a failed upload drops an index that is
    // already committed, never one still being written (commit.ts).
    const [own, beside] = await Promise.allSettled([
      pipelined(trx, records),
      writeIndexBeside(c.beside.writer, c.ref, rowsOf(), total),
    ]);
    if (own.status === 'rejected') throw own.reason;
    if (beside.status === 'fulfilled') {
      c.beside.written();
      await setIndexState(trx, c.ref, await index());
    } else {
      // The second connection failed (none to be had, say): written here instead, over whatever
      // of it that connection may have committed, so the upload stands as it would have without.
      c.beside.failed(beside.reason);
      await resetFindingsIndex(trx, c.ref, await index());
      await pipelined(trx, indexStatements(c.ref, rowsOf(), total));
    }
    // Published with this commit.
    await clearPendingIndex(trx, c.ref);
  }

  // The session's own counts are made from scratch below, so the changes skip its rows.
  const touched = await applyTriageChanges(trx, t, merged.changed, c.ref.sessionId);
  await recountSession(trx, c.ref, t.target);
  const day = c.now.toISOString().slice(0, 10);
  await rescoreSessions(trx, t.clientId, touched, day);
  const own = await countsOf(trx, [c.ref]);
  return { counts: merged.counts, triage: own.length === 0 ? null : summaryOfCounts(own, day) };
}
