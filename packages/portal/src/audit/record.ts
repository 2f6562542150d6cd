import type { Kysely, Transaction } from 'kysely';
import type { AuditEvent, AuditEventType } from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import { presentAuditEvent } from './present.ts';
import { insertAuditEvent, insertAuditEvents } from './queries.ts';

// Areas that write events through this module also present rows of their own with it.
export { presentAuditEvent } from './present.ts';

export interface AuditInput {
  event_type: AuditEventType;
  actor: string;
  session_id?: string | null;
  client_id?: string | null;
  data?: Record<string, unknown>;
}

/** Insert one audit event; call inside the operation's transaction, publish after commit. */
export async function recordAuditEvent(
  db: Kysely<Database> | Transaction<Database>,
  input: AuditInput,
): Promise<AuditEvent> {
  const row = await insertAuditEvent(db, {
    event_type: input.event_type,
    actor: input.actor,
    session_id: input.session_id ?? null,
    client_id: input.client_id ?? null,
    data: JSON.stringify(input.data ?? {}),
  });
  return presentAuditEvent(row);
}

/** Insert many audit events at once (a bulk change: one per finding); publish after commit. */
export async function recordAuditEvents(
  db: Kysely<Database> | Transaction<Database>,
  inputs: readonly AuditInput[],
): Promise<AuditEvent[]> {
  const rows = await insertAuditEvents(
    db,
    inputs.map((input) => ({
      event_type: input.event_type,
      actor: input.actor,
      session_id: input.session_id ?? null,
      client_id: input.client_id ?? null,
      data: JSON.stringify(input.data ?? {}),
    })),
  );
  return rows.map(presentAuditEvent);
}
