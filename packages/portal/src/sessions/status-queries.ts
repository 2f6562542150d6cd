import { sql, type Kysely, type Selectable } from 'kysely';
import type { AuditEvent, SessionStatus } from '@svc/protocol';
import { presentAuditEvent } from '../audit/record.ts';
import type { AuditEventsTable, Database } from '../db/schema.ts';

export interface StatusChange {
  sessionId: string;
  /** The client the request names; undefined: whichever the id is unique under within the scope. */
  clientId: string | undefined;
  /** The caller's client ids; null for every client. */
  scope: readonly string[] | null;
  status: SessionStatus;
  note: string | undefined;
  actor: string;
  now: Date;
}

type Row = { previous: SessionStatus; audit_id: string | null } & {
  [K in keyof Selectable<AuditEventsTable> as `audit_${K}`]: Selectable<AuditEventsTable>[K] | null;
};

/**
 * the status change as one statement: lock the session, keep the note, and when the status
 * really changes, update it, add the history row and the `status_changed` audit row. One
 * round trip instead of a transaction of six: status changes trigger webhooks, and the
 * fewer statements they hold a connection for, the less they queue behind a busy fan-out.
 * Concurrent changes of one session serialise on the row lock (the second sees the
 * first's status once it commits). Undefined: no such session in the caller's scope,
 * or several (docs/api.md#ids-are-per-client: the id exists under more than one client in scope and none was named).
 */
export async function changeStatus(
  db: Kysely<Database>,
  c: StatusChange,
): Promise<{ previous: SessionStatus; event: AuditEvent | null } | undefined> {
  const note = c.note ?? null;
  // Which sessions the caller could mean: this id, in scope, of the named client if any.
  const candidate = (alias: string) =>
    sql`${sql.ref(`${alias}.session_id`)} = ${c.sessionId}
      AND (${c.scope === null}::boolean OR ${sql.ref(`${alias}.client_id`)} = ANY(${c.scope ?? []}::text[]))
      AND (${c.clientId === undefined}::boolean OR ${sql.ref(`${alias}.client_id`)} = ${c.clientId ?? ''}::text)`;
  const { rows } = await sql<Row>`
    WITH cur AS (
      SELECT status, client, client_id, NULLIF(client_id, '') AS shown_client_id, target FROM sessions me
      WHERE ${candidate('me')}
        AND NOT EXISTS (SELECT 1 FROM sessions other WHERE ${candidate('other')} AND other.client_id <> me.client_id)
      FOR UPDATE
    ), noted AS (
      INSERT INTO session_notes (client_id, session_id, author, note, created_at)
      SELECT client_id, ${c.sessionId}, ${c.actor}, ${note}::text, ${c.now} FROM cur WHERE ${note}::text IS NOT NULL
    ), changed AS (
      UPDATE sessions s SET status = ${c.status}, updated_at = ${c.now}
      FROM cur
      WHERE s.client_id = cur.client_id AND s.session_id = ${c.sessionId} AND cur.status <> ${c.status}
      RETURNING cur.status AS previous, cur.client, cur.client_id, cur.shown_client_id, cur.target
    ), history AS (
      INSERT INTO status_history (client_id, session_id, from_status, to_status, changed_by, note, changed_at)
      SELECT client_id, ${c.sessionId}, previous, ${c.status}, ${c.actor}, ${note}::text, ${c.now} FROM changed
    ), audit AS (
      INSERT INTO audit_events (event_type, actor, session_id, client_id, data)
      SELECT 'status_changed', ${c.actor}, ${c.sessionId}, shown_client_id,
             jsonb_build_object('session_id', ${c.sessionId}::text, 'client', client, 'client_id', shown_client_id, 'target', target,
                                'previous_status', previous, 'new_status', ${c.status}::text, 'changed_by', ${c.actor}::text,
                                'changed_at', ${c.now.toISOString()}::text)
      FROM changed
      RETURNING *
    )
    SELECT cur.status AS previous, a.id AS audit_id, a.event_type AS audit_event_type, a.session_id AS audit_session_id,
           a.client_id AS audit_client_id, a.actor AS audit_actor, a.data AS audit_data, a.created_at AS audit_created_at
    FROM cur LEFT JOIN audit a ON true
  `.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  if (row.audit_id === null) return { previous: row.previous, event: null };
  const event = presentAuditEvent({
    id: row.audit_id,
    event_type: row.audit_event_type as string,
    session_id: row.audit_session_id,
    client_id: row.audit_client_id,
    actor: row.audit_actor as string,
    data: row.audit_data as Record<string, unknown>,
    created_at: row.audit_created_at as Date,
  });
  return { previous: row.previous, event };
}
