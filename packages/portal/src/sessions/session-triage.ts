import type { TriageSummary } from '@svc/protocol';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { SessionRow } from './queries.ts';
import { countsOf } from './triage-counts-queries.ts';
import { countsBySession, sessionKey, summaryOfCounts } from './triage-view.ts';

/**
 * The current triage numbers of some sessions (docs/findings-of-record.md#one-set-of-numbers),
 * from their counts: one query for a whole page. A session without counted findings (not indexed
 * yet, or nothing to count) has none: it states what its file said.
 */
export async function triageOfSessions(
  db: Kysely<Database>,
  rows: readonly Pick<SessionRow, 'client_id' | 'session_id'>[],
  day: string,
): Promise<(row: Pick<SessionRow, 'client_id' | 'session_id'>) => TriageSummary | null> {
  const grouped = countsBySession(
    await countsOf(
      db,
      rows.map((r) => ({ clientId: r.client_id, sessionId: r.session_id })),
    ),
  );
  return (row) => {
    const counts = grouped.get(sessionKey(row.client_id, row.session_id));
    return counts === undefined ? null : summaryOfCounts(counts, day);
  };
}
