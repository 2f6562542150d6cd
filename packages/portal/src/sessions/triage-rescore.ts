import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { updateSessionRow } from './queries.ts';
import { countsOf } from './triage-counts-queries.ts';
import { countsBySession, sessionKey, summaryOfCounts } from './triage-view.ts';

/**
 * Stores the actual score and grade of sessions whose triage counts changed: the listing sorts
 * by them. (The operational score depends on the day and is computed whenever it is shown.)
 * A session without counted findings keeps what its file stated.
 */
export async function rescoreSessions(
  db: Kysely<Database>,
  clientId: string,
  sessionIds: readonly string[],
  day: string,
): Promise<void> {
  if (sessionIds.length === 0) return;
  const keys = sessionIds.map((sessionId) => ({ clientId, sessionId }));
  const grouped = countsBySession(await countsOf(db, keys));
  for (const k of keys) {
    const rows = grouped.get(sessionKey(k.clientId, k.sessionId));
    if (rows === undefined) continue;
    const { scores } = summaryOfCounts(rows, day);
    await updateSessionRow(db, k, { risk_score: scores.risk_score, risk_grade: scores.risk_grade });
  }
}
