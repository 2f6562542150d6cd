import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';

/**
 * The SQL of delivery leases (migration 0019, webhooks/leases.ts). Lease times are the
 * database's clock (`now()`), the one clock every replica shares. Leases are written with
 * their delivery by delivery-log.ts and deleted with its outcome there.
 */

const leaseEnd = (seconds: number) => sql`now() + ${seconds}::int * interval '1 second'`;

/** An expired lease's delivery, with what deciding on it and sending it again needs of its subscription. */
export interface ExpiredDelivery {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  body: string;
  body_sealed: string | null;
  client_id: string | null;
  status: string;
  runs: number;
  enabled: boolean;
  subscription_client_id: string | null;
  url: string;
  signing_secret: string | null;
  signing_secret_encrypted: string | null;
}

/**
 * Up to `limit` deliveries whose lease expired, the oldest expiry first, their lease and delivery
 * rows locked until the transaction ends. SKIP LOCKED: a concurrent sweep (another replica's)
 * takes other rows, and a delivery whose outcome is being written at this moment (its row
 * locked by that UPDATE) is left to it; nothing here ever waits for another writer.
 */
export async function lockExpired(trx: Transaction<Database>, limit: number): Promise<ExpiredDelivery[]> {
  const { rows } = await sql<ExpiredDelivery>`
    SELECT d.id, d.subscription_id, d.event_id, d.event_type, d.body, d.body_sealed, d.client_id, d.status, d.runs,
           s.enabled, s.client_id AS subscription_client_id, s.url, s.signing_secret, s.signing_secret_encrypted
    FROM webhook_delivery_leases l
    JOIN webhook_deliveries d ON d.id = l.delivery_id
    JOIN webhook_subscriptions s ON s.id = d.subscription_id
    WHERE l.claimed_until < now()
    ORDER BY l.claimed_until
    LIMIT ${limit}
    FOR UPDATE OF l, d SKIP LOCKED
  `.execute(trx);
  return rows;
}

export interface Settlement {
  /** Taken over by `owner`: a new run, under a new lease. */
  take: string[];
  /** Ended `abandoned`, with the reason logged as its last attempt. */
  abandon: { id: string; reason: string }[];
  /** Finished already (by a replica of an older version, which keeps its lease): the lease goes. */
  drop: string[];
}

/**
 * What the sweep decided for rows `lockExpired` locked, in one statement. Answers the new run
 * number of each delivery taken over.
 */
export async function settleExpired(
  trx: Transaction<Database>,
  s: Settlement,
  lease: { owner: string; seconds: number },
  at: Date,
): Promise<Map<string, number>> {
  const ids = [...s.take, ...s.abandon.map((a) => a.id), ...s.drop];
  if (ids.length === 0) return new Map();
  const kinds = [...s.take.map(() => 'take'), ...s.abandon.map(() => 'abandon'), ...s.drop.map(() => 'drop')];
  const reasons = [...s.take.map(() => null), ...s.abandon.map((a) => a.reason), ...s.drop.map(() => null)];
  const { rows } = await sql<{ id: string; runs: number }>`
    WITH verdicts AS (
      SELECT * FROM unnest(${ids}::bigint[], ${kinds}::text[], ${reasons}::text[]) AS v(id, kind, reason)
    ), released AS (
      DELETE FROM webhook_delivery_leases l USING verdicts v WHERE l.delivery_id = v.id AND v.kind <> 'take'
    ), leased AS (
      UPDATE webhook_delivery_leases l SET claimed_by = ${lease.owner}, claimed_until = ${leaseEnd(lease.seconds)}
      FROM verdicts v WHERE l.delivery_id = v.id AND v.kind = 'take'
    ), abandoned AS (
      UPDATE webhook_deliveries d
      SET status = 'abandoned',
          attempts = d.attempts || jsonb_build_array(jsonb_build_object(
            'attempt', jsonb_array_length(d.attempts) + 1, 'status_code', NULL, 'duration_ms', NULL,
            'error', v.reason, 'attempted_at', ${at.toISOString()}::text))
      FROM verdicts v WHERE d.id = v.id AND v.kind = 'abandon'
    )
    UPDATE webhook_deliveries d SET runs = d.runs + 1
    FROM verdicts v WHERE d.id = v.id AND v.kind = 'take'
    RETURNING d.id, d.runs
  `.execute(trx);
  return new Map(rows.map((r) => [r.id, r.runs]));
}

/**
 * Push the leases of `owner`'s deliveries in flight forward. Rows locked by someone else are
 * skipped, not waited for: a delivery whose outcome is being written (its lease about to go), or
 * one a sweep is taking over because this lease had already expired.
 */
export async function renewLeases(
  db: Kysely<Database>,
  owner: string,
  ids: string[],
  seconds: number,
): Promise<number> {
  const { numAffectedRows } = await sql`
    UPDATE webhook_delivery_leases SET claimed_until = ${leaseEnd(seconds)}
    WHERE delivery_id IN (
      SELECT delivery_id FROM webhook_delivery_leases
      WHERE delivery_id = ANY(${ids}::bigint[]) AND claimed_by = ${owner}
      FOR UPDATE SKIP LOCKED
    )
  `.execute(db);
  return Number(numAffectedRows ?? 0);
}
