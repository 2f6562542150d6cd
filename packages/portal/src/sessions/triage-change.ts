import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { Actor } from '../records/decide.ts';
import { type HistoryLine, type RecordRow, sameTriage, type TriageChange, triageKeyOf } from '../records/model.ts';
import { insertHistory, lockTarget, recordsByFingerprint, type TargetRef, writeRecords } from '../records/queries.ts';
import { applyPersonChange, type ChangeOutcome, type PersonChange } from '../records/triage.ts';
import { applyTriageChanges } from './triage-counts-queries.ts';
import { rescoreSessions } from './triage-rescore.ts';

/**
 * People's changes of findings of record of one target, inside the caller's transaction
 * (docs/findings-of-record.md#who-decides): the target is locked, the records changed and
 * stored with their history, and every indexed session of the target holding a record whose
 * triage changed is counted again, so its listing, file and share page state the new numbers.
 */

export interface RecordChangeResult {
  /** Per fingerprint asked: the record after the change and what changed; absent when there is no such record. */
  outcomes: Map<string, { record: RecordRow; outcome: ChangeOutcome }>;
}

export async function changeRecords(
  trx: Kysely<Database>,
  t: TargetRef,
  items: readonly { fingerprint: string; change: PersonChange }[],
  a: Actor,
): Promise<RecordChangeResult> {
  await lockTarget(trx, t);
  const records = new Map(
    (
      await recordsByFingerprint(
        trx,
        t,
        items.map((i) => i.fingerprint),
      )
    ).map((r) => [r.fingerprint, r]),
  );
  const history: HistoryLine[] = [];
  const changes: TriageChange[] = [];
  const outcomes: RecordChangeResult['outcomes'] = new Map();
  const written = new Map<string, RecordRow>();
  for (const { fingerprint, change } of items) {
    const stored = records.get(fingerprint);
    if (stored === undefined) continue;
    const r = written.get(fingerprint) ?? { ...stored };
    const before = triageKeyOf(r);
    const outcome = applyPersonChange(r, change, a, history);
    outcomes.set(fingerprint, { record: r, outcome });
    if (!outcome.changed) continue;
    r.updated_at = a.at;
    written.set(fingerprint, r);
    const after = triageKeyOf(r);
    if (!sameTriage(before, after)) changes.push({ fingerprint, before, after });
  }
  await writeRecords(trx, [...written.values()]);
  await insertHistory(trx, t, history);
  const touched = await applyTriageChanges(trx, t, changes);
  await rescoreSessions(trx, t.clientId, touched, a.at.toISOString().slice(0, 10));
  return { outcomes };
}
