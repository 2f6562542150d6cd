import type { AppContext } from '../context.ts';
import { ensureIndexed } from './findings.ts';
import type { SessionRow } from './queries.ts';
import type { SharedTriage } from './results.ts';
import { recordTarget } from './records-merge.ts';
import { triageOfSessions } from './session-triage.ts';
import { lastTriageChange } from './triage-counts-queries.ts';

/**
 * What the share page states besides the uploaded report (docs/findings-of-record.md#the-share-page):
 * the session's numbers as its triage stands today, and whether that triage changed after the
 * report was made (the report is the scanner's HTML, which the portal cannot render again).
 */
export async function sharedTriage(ctx: AppContext, row: SessionRow): Promise<SharedTriage> {
  await ensureIndexed(ctx, row);
  const now = ctx.now();
  const ref = { clientId: row.client_id, sessionId: row.session_id };
  const [triage, last] = await Promise.all([
    triageOfSessions(ctx.db, [row], now.toISOString().slice(0, 10)),
    lastTriageChange(ctx.db, ref, recordTarget(row.target)),
  ]);
  const reportAt = row.uploaded_at;
  return {
    summary: triage(row),
    asOf: now,
    reportAt,
    changedSince: last !== null && last.getTime() > reportAt.getTime() ? last : null,
  };
}
