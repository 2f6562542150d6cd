import type { Selectable } from 'kysely';
import type { AuditEvent, AuditEventType } from '@svc/protocol';
import type { AuditEventsTable } from '../db/schema.ts';

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
