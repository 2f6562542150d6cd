import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { SessionRef } from './queries.ts';

/** What decides whether a key may delete a session (key-delete.ts). */
export interface KeyDeleteFacts {
  /** The license that first uploaded the session; null: the legacy key did. */
  license_id: string | null;
  first_uploaded_at: Date;
  /** Its review status was ever changed (status_history). */
  status_changed: boolean;
  /** Someone left a note on it (session_notes). */
  noted: boolean;
  /** A remediation update named it (its `remediation_updated` audit event). */
  remediation_named: boolean;
  /** A person changed a finding of record of its target since its first upload (finding_history). */
  findings_triaged: boolean;
}

/**
 * The facts of one session, its row locked FOR UPDATE until the transaction ends (a review
 * status change waits for it). `target` is the session's record target (records-merge.ts's
 * recordTarget). Undefined: no such session (any more).
 */
export async function keyDeleteFacts(
  db: Kysely<Database>,
  ref: SessionRef,
  target: string,
): Promise<KeyDeleteFacts | undefined> {
  const { rows } = await sql<KeyDeleteFacts>`
    SELECT s.license_id, s.first_uploaded_at,
      EXISTS (SELECT 1 FROM status_history h WHERE h.client_id = s.client_id AND h.session_id = s.session_id) AS status_changed,
      EXISTS (SELECT 1 FROM session_notes n WHERE n.client_id = s.client_id AND n.session_id = s.session_id) AS noted,
      EXISTS (
        SELECT 1 FROM audit_events a
        WHERE a.session_id = s.session_id AND a.event_type = 'remediation_updated'
          AND a.client_id IS NOT DISTINCT FROM NULLIF(s.client_id, '')
      ) AS remediation_named,
      EXISTS (
        SELECT 1 FROM finding_history f
        WHERE f.client_id = s.client_id AND f.target = ${target} AND f.source = 'person' AND f.at >= s.first_uploaded_at
      ) AS findings_triaged
    FROM sessions s
    WHERE s.client_id = ${ref.clientId} AND s.session_id = ${ref.sessionId}
    FOR UPDATE OF s
  `.execute(db);
  return rows[0];
}
