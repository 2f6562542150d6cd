import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { AuditEventsTable, Database } from '../db/schema.ts';
import type { DomainEvent } from '../events/bus.ts';

/**
 * The SQL of webhook_outbox (migration 0036): events staged by their operation's transaction
 * until a fan-out claims them (delivery-log.ts `openFanOut`). Audited events are staged by the
 * trigger on audit_events; what is written here is the staging of events that are not audited.
 */

type Db = Kysely<Database> | Transaction<Database>;

/** An event's row in webhook_outbox: by its audit id, or its own id when it is not audited. */
export type OutboxClaim = { auditId: number } | { outboxId: string };

/** The condition that picks an event's staged row. */
export const stagedRow = (claim: OutboxClaim) =>
  'auditId' in claim ? sql`audit_id = ${claim.auditId}::bigint` : sql`id = ${claim.outboxId}::bigint`;

/**
 * Stage events that are not audited, inside the transaction that decided them, each only when
 * an enabled subscription listens to it (the trigger's rule). Answers the events in their order,
 * each staged one with its `outbox_id`.
 */
export async function stageEvents(db: Db, events: readonly DomainEvent[]): Promise<DomainEvent[]> {
  if (events.length === 0) return [];
  // The ids are drawn before the insert so that each maps back to its event by position.
  const { rows } = await sql<{ id: string; ord: string }>`
    WITH staged AS (
      SELECT nextval(pg_get_serial_sequence('webhook_outbox', 'id')) AS id, e, ord
      FROM unnest(${events.map((e) => JSON.stringify(e))}::jsonb[]) WITH ORDINALITY AS t(e, ord)
      WHERE EXISTS (
        SELECT 1 FROM webhook_subscriptions s
        WHERE s.enabled AND e->>'event_type' = ANY(s.event_types)
          AND (s.client_id IS NULL OR s.client_id = e->>'client_id'))
    ), inserted AS (
      INSERT INTO webhook_outbox (id, event) SELECT id, e FROM staged
    )
    SELECT id::text, ord::text FROM staged
  `.execute(db);
  const ids = new Map(rows.map((r) => [Number(r.ord) - 1, r.id]));
  return events.map((e, i) => {
    const id = ids.get(i);
    return id === undefined ? e : { ...e, outbox_id: id };
  });
}

/** A staged event nobody claimed: its audit row, or its body when it is not audited; neither when its audit row went. */
export type StaleStaged =
  | { id: string; audit: Selectable<AuditEventsTable>; event: null }
  | { id: string; audit: null; event: DomainEvent }
  | { id: string; audit: null; event: null };

/** Drop staged rows that have nothing left to send. */
export async function dropStaged(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length > 0)
    await db
      .deleteFrom('webhook_outbox')
      .where('id', 'in', [...ids])
      .execute();
}

/**
 * Up to `limit` events staged more than `seconds` ago and not claimed since, oldest first: their
 * process stopped (or lost its database) between the commit and the fan-out. Read without a
 * lock: the fan-out's claim decides who sends them.
 */
export async function staleStaged(db: Db, seconds: number, limit: number): Promise<StaleStaged[]> {
  const { rows } = await sql<{
    id: string;
    event: DomainEvent | null;
    a_id: string | null;
    event_type: string;
    actor: string;
    session_id: string | null;
    client_id: string | null;
    data: Record<string, unknown>;
    created_at: Date;
  }>`
    SELECT o.id, o.event, a.id AS a_id, a.event_type, a.actor, a.session_id, a.client_id, a.data, a.created_at
    FROM webhook_outbox o LEFT JOIN audit_events a ON a.id = o.audit_id
    WHERE o.created_at < now() - ${seconds}::int * interval '1 second'
    ORDER BY o.created_at, o.id
    LIMIT ${limit}
  `.execute(db);
  return rows.map((r) =>
    r.a_id === null
      ? { id: r.id, audit: null, event: r.event }
      : {
          id: r.id,
          event: null,
          audit: {
            id: r.a_id,
            event_type: r.event_type,
            actor: r.actor,
            session_id: r.session_id,
            client_id: r.client_id,
            data: r.data,
            created_at: r.created_at,
          },
        },
  );
}
