import type { Kysely, Transaction } from 'kysely';
import type { AuditEvent, AuditEventType } from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import type { AuditEventsTable } from '../db/schema.ts';
import type { Selectable } from 'kysely';

export interface AuditInput {
  event_type: AuditEventType;
  actor: string;
  session_id?: string | null;
  client_id?: string | null;
  data?: Record<string, unknown>;
}

export function presentAuditEvent(row: Selectable<AuditEventsTable>): AuditEvent {
  return {
    id: Number(row.id),
    event_type: row.event_type as AuditEventType,
    session_id: row.session_id,
    client_id: row.client_id,
    actor: row.actor,
    data: row.data,
    created_at: row.created_at.toISOString(),
  };
}

/** Insert one audit event; call inside the operation's transaction, publish after commit. */
export async function recordAuditEvent(
  db: Kysely<Database> | Transaction<Database>,
  input: AuditInput,
): Promise<AuditEvent> {
  const row = await db
    .insertInto('audit_events')
    .values({
      event_type: input.event_type,
      actor: input.actor,
      session_id: input.session_id ?? null,
      client_id: input.client_id ?? null,
      data: JSON.stringify(input.data ?? {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return presentAuditEvent(row);
}
