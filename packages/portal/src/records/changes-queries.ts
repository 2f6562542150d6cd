import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.ts';

/** The SQL of "what changed" per target: the latest scan's changes (its findings index) and the scan before it. */

export interface TargetChangesRow {
  client_id: string;
  target: string;
  last_session_id: string | null;
  last_scanned_at: Date | null;
  session_stored: boolean;
  previous_session_id: string | null;
  previous_scanned_at: Date | null;
  new: string;
  persistent: string;
  reopened: string;
  resolved: string;
  not_checked: string;
}

/** A page's position: after this client's target, in the order of the listing. */
export type TargetPosition = readonly [clientId: string, target: string];

/**
 * The targets of `clientIds` (null: every client) after `after`, `limit` of them, by client and
 * target (the primary key, so a page is an index range). The counts are the latest
 * session's `change` column, frozen by its merge; the previous scan is the stored session of
 * the target scanned before it (sessions keep the target as uploaded, records trimmed).
 */
export async function targetChangesOf(
  db: Kysely<Database>,
  clientIds: readonly string[] | null,
  where: { clientId?: string | undefined; target?: string | undefined },
  page: { after: TargetPosition | undefined; limit: number },
): Promise<TargetChangesRow[]> {
  const conditions = [sql`true`];
  if (clientIds !== null) conditions.push(sql`t.client_id = ANY(${sql.val([...clientIds])}::text[])`);
  if (where.clientId !== undefined) conditions.push(sql`t.client_id = ${where.clientId}`);
  if (where.target !== undefined) conditions.push(sql`t.target = ${where.target}`);
  if (page.after !== undefined) conditions.push(sql`(t.client_id, t.target) > (${page.after[0]}, ${page.after[1]})`);
  const { rows } = await sql<TargetChangesRow>`
    SELECT t.client_id, t.target, t.last_session_id, t.last_scanned_at,
      EXISTS (SELECT 1 FROM sessions s WHERE s.client_id = t.client_id AND s.session_id = t.last_session_id)
        AS session_stored,
      prev.session_id AS previous_session_id, prev.scanned_at AS previous_scanned_at,
      coalesce(c.new, 0) AS new, coalesce(c.persistent, 0) AS persistent, coalesce(c.reopened, 0) AS reopened,
      coalesce(c.resolved, 0) AS resolved, coalesce(c.not_checked, 0) AS not_checked
    FROM finding_targets t
    LEFT JOIN LATERAL (
      SELECT count(*) FILTER (WHERE sf.change = 'new') AS new,
        count(*) FILTER (WHERE sf.change = 'persistent') AS persistent,
        count(*) FILTER (WHERE sf.change = 'reopened') AS reopened,
        count(*) FILTER (WHERE sf.change = 'resolved') AS resolved,
        count(*) FILTER (WHERE sf.change = 'not_checked') AS not_checked
      FROM session_findings sf
      WHERE sf.client_id = t.client_id AND sf.session_id = t.last_session_id
    ) c ON true
    LEFT JOIN LATERAL (
      SELECT s.session_id, s.scanned_at FROM sessions s
      WHERE s.client_id = t.client_id AND btrim(s.target) = t.target AND s.session_id <> t.last_session_id
        AND s.scanned_at <= t.last_scanned_at
      ORDER BY s.scanned_at DESC, s.session_id DESC LIMIT 1
    ) prev ON true
    WHERE ${sql.join(conditions, sql` AND `)}
    ORDER BY t.client_id, t.target
    LIMIT ${page.limit}
  `.execute(db);
  return rows;
}
