import { type Insertable, type Kysely, type RawBuilder, type Selectable, sql, type Updateable } from 'kysely';
import type { SessionFileName, SessionSort, SessionStatus } from '@svc/protocol';
import type { Database, SessionNotesTable, SessionsTable, StatusHistoryTable, StoredObject } from '../db/schema.ts';

export type SessionRow = Selectable<SessionsTable>;

export interface SessionRef {
  clientId: string;
  sessionId: string;
}

export function findSession(db: Kysely<Database>, ref: SessionRef): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .executeTakeFirst();
}

/** Every session with this id under `clientId` if named, else within `scope` (null: every client), by client id. */
export function sessionsWithId(
  db: Kysely<Database>,
  sessionId: string,
  where: { clientId: string | undefined; scope: readonly string[] | null },
): Promise<SessionRow[]> {
  let q = db.selectFrom('sessions').selectAll().where('session_id', '=', sessionId);
  if (where.clientId !== undefined) q = q.where('client_id', '=', where.clientId);
  else if (where.scope !== null) q = q.where('client_id', 'in', where.scope);
  return q.orderBy('client_id').execute();
}

export function statusHistoryOf(db: Kysely<Database>, ref: SessionRef): Promise<Selectable<StatusHistoryTable>[]> {
  return db
    .selectFrom('status_history')
    .selectAll()
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .orderBy('changed_at')
    .orderBy('id')
    .execute();
}

export function notesOf(db: Kysely<Database>, ref: SessionRef): Promise<Selectable<SessionNotesTable>[]> {
  return db
    .selectFrom('session_notes')
    .selectAll()
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

// ---- uploads (commit.ts) ----

/** A transaction-scoped advisory lock on one session id of one client, held whether the row exists or not. */
export async function lockSessionKey(db: Kysely<Database>, ref: SessionRef): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${ref.clientId}), hashtext(${ref.sessionId}))`.execute(db);
}

/** The session row, locked FOR UPDATE until the transaction ends. */
export function lockSessionRow(db: Kysely<Database>, ref: SessionRef): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .forUpdate()
    .executeTakeFirst();
}

/** How many sessions count against a license. */
export async function sessionCountOfLicense(db: Kysely<Database>, licenseId: string): Promise<number> {
  const { n } = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('license_id', '=', licenseId)
    .executeTakeFirstOrThrow();
  return Number(n);
}

export async function updateSessionRow(
  db: Kysely<Database>,
  ref: SessionRef,
  set: Updateable<SessionsTable>,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set(set)
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .execute();
}

export async function insertSessionRow(db: Kysely<Database>, values: Insertable<SessionsTable>): Promise<void> {
  await db.insertInto('sessions').values(values).execute();
}

// ---- share tokens: share-queries.ts; the session row locks of a share change ----

/** The session's client and client id, its row locked FOR UPDATE (a share change against a delete or re-upload). */
export function lockSessionClient(
  db: Kysely<Database>,
  ref: SessionRef,
): Promise<Pick<SessionRow, 'client' | 'client_id'> | undefined> {
  return db
    .selectFrom('sessions')
    .select(['client', 'client_id'])
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .forUpdate()
    .executeTakeFirst();
}

/** The session's client name, its row locked FOR UPDATE. */
export function lockSessionClientName(
  db: Kysely<Database>,
  ref: SessionRef,
): Promise<Pick<SessionRow, 'client'> | undefined> {
  return db
    .selectFrom('sessions')
    .select('client')
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .forUpdate()
    .executeTakeFirst();
}

// ---- deletion and retention (delete.ts, retention.ts, sweep.ts) ----

/** Deletes the session row, only while it is still expired at `expiredAt` when given; the deleted row. */
export function deleteSessionRow(
  db: Kysely<Database>,
  ref: SessionRef,
  expiredAt: Date | undefined,
): Promise<SessionRow | undefined> {
  let q = db.deleteFrom('sessions').where('client_id', '=', ref.clientId).where('session_id', '=', ref.sessionId);
  if (expiredAt !== undefined) q = q.where('expires_at', '<=', expiredAt);
  return q.returningAll().executeTakeFirst() as Promise<SessionRow | undefined>;
}

/** Up to `limit` sessions expired at `now`, the longest expired first. */
export async function expiredSessions(db: Kysely<Database>, now: Date, limit: number): Promise<SessionRef[]> {
  const rows = await db
    .selectFrom('sessions')
    .select(['client_id', 'session_id'])
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ clientId: r.client_id, sessionId: r.session_id }));
}

/**
 * Marks up to `limit` sessions expiring within `days` and not yet notified, and returns them.
 * One UPDATE, so two replicas cannot both mark (and notify) the same session.
 */
export function markExpiringSessions(db: Kysely<Database>, now: Date, days: number, limit: number) {
  return db
    .updateTable('sessions')
    .set({ expiry_notified_at: now })
    .where(
      sql<boolean>`(client_id, session_id) IN (
        SELECT client_id, session_id FROM sessions
        WHERE expiry_notified_at IS NULL AND expires_at > ${now}
          AND expires_at <= ${now}::timestamptz + make_interval(days => ${days})
        LIMIT ${limit})`,
    )
    .where('expiry_notified_at', 'is', null)
    .returning(['session_id', 'client', 'client_id', 'target', 'uploaded_at', 'expires_at'])
    .execute();
}

/** The blob key of every stored file of every session: only the keys, not the rows' file records. */
export async function fileKeysOfAllSessions(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ key: string }>`
    SELECT f.value->>'key' AS key FROM sessions CROSS JOIN LATERAL jsonb_each(sessions.files) AS f`.execute(db);
  return rows.map((r) => r.key);
}

// ---- file updates (refresh.ts, remediation.ts) ----

/** The session's stored files, or undefined when there is no such session. */
export async function filesOf(db: Kysely<Database>, ref: SessionRef): Promise<SessionRow['files'] | undefined> {
  const row = await db
    .selectFrom('sessions')
    .select('files')
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .executeTakeFirst();
  return row?.files;
}

/**
 * Points one file of the session at `object` while its version is still `version`
 * (optimistic locking), optionally setting `metadata.has_exec_summary`; true when it applied.
 */
export async function replaceFileAtVersion(
  db: Kysely<Database>,
  c: {
    ref: SessionRef;
    version: number;
    file: SessionFileName;
    object: StoredObject;
    setExecSummary: boolean;
    now: Date;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({
      files: sql<string>`jsonb_set(files, ${sql.val([c.file])}::text[], ${JSON.stringify(c.object)}::jsonb)`,
      ...(c.setExecSummary ? { metadata: sql<string>`jsonb_set(metadata, '{has_exec_summary}', 'true'::jsonb)` } : {}),
      version: sql<number>`version + 1`,
      updated_at: c.now,
    })
    .where('client_id', '=', c.ref.clientId)
    .where('session_id', '=', c.ref.sessionId)
    .where('version', '=', c.version)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

// ---- listing (listing.ts) ----

/** How a sort compares: the expression's SQL type, for the cursor's value. */
export type SortKind = 'time' | 'text' | 'number';

/**
 * The listing's sort expressions: never NULL (a keyset comparison with NULL is never true),
 * text without regard to case, status in review order.
 */
const SORTS: Record<SessionSort, { expr: RawBuilder<unknown>; kind: SortKind }> = {
  uploaded_at: { expr: sql`sessions.uploaded_at`, kind: 'time' },
  scanned_at: { expr: sql`sessions.scanned_at`, kind: 'time' },
  target: { expr: sql`lower(COALESCE(sessions.target, ''))`, kind: 'text' },
  client: { expr: sql`lower(COALESCE(sessions.client, sessions.client_id))`, kind: 'text' },
  risk_score: { expr: sql`COALESCE(sessions.risk_score, -1)`, kind: 'number' },
  status: {
    expr: sql`CASE sessions.status WHEN 'new' THEN 0 WHEN 'in_review' THEN 1 WHEN 'resolved' THEN 2 ELSE 3 END`,
    kind: 'number',
  },
};

export const sortKindOf = (sort: SessionSort): SortKind => SORTS[sort].kind;

const CAST: Record<SortKind, RawBuilder<unknown>> = {
  time: sql`timestamptz`,
  text: sql`text`,
  number: sql`double precision`,
};

export interface SessionFilterQuery {
  /** null: every client. */
  clientIds: readonly string[] | null;
  clientId: string | undefined;
  status: SessionStatus | undefined;
  /** Exact target. */
  target: string | undefined;
  /** Part of the target, client name or client id, in any case. */
  search: string | undefined;
  uploadedFrom: Date | undefined;
  uploadedTo: Date | undefined;
}

export interface SessionPageQuery extends SessionFilterQuery {
  sort: SessionSort;
  order: 'asc' | 'desc';
  /**
   * Keyset position: rows strictly after (key, session_id[, client_id]) in the listing's
   * order; client null for a cursor of a portal that did not write one (uploaded_at only).
   */
  after: { key: Date | string | number; sessionId: string; clientId: string | null } | undefined;
  limit: number;
}

/** LIKE pattern for a substring, its own % _ and \ taken literally (\ is LIKE's default escape). */
const containing = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function filtered(db: Kysely<Database>, f: SessionFilterQuery) {
  let q = db.selectFrom('sessions');
  if (f.clientIds !== null) q = q.where('sessions.client_id', 'in', f.clientIds);
  if (f.clientId !== undefined) q = q.where('sessions.client_id', '=', f.clientId);
  if (f.status !== undefined) q = q.where('sessions.status', '=', f.status);
  if (f.target !== undefined) q = q.where('sessions.target', '=', f.target);
  if (f.uploadedFrom !== undefined) q = q.where('sessions.uploaded_at', '>=', f.uploadedFrom);
  if (f.uploadedTo !== undefined) q = q.where('sessions.uploaded_at', '<=', f.uploadedTo);
  if (f.search !== undefined) {
    const p = containing(f.search);
    q = q.where(
      sql<boolean>`(lower(COALESCE(sessions.target, '')) LIKE lower(${p})
        OR lower(COALESCE(sessions.client, '')) LIKE lower(${p})
        OR lower(sessions.client_id) LIKE lower(${p}))`,
    );
  }
  return q;
}

/**
 * How many sessions match the filters (every page). Filters of client and status only are
 * summed from session_counts (migration 0029): exact, without reading the sessions.
 */
export async function sessionCount(db: Kysely<Database>, f: SessionFilterQuery): Promise<number> {
  if ([f.target, f.search, f.uploadedFrom, f.uploadedTo].every((v) => v === undefined)) {
    let q = db.selectFrom('session_counts').select(sql<string>`COALESCE(sum(n), 0)`.as('n'));
    if (f.clientIds !== null) q = q.where('client_id', 'in', f.clientIds);
    if (f.clientId !== undefined) q = q.where('client_id', '=', f.clientId);
    if (f.status !== undefined) q = q.where('status', '=', f.status);
    const { n } = await q.executeTakeFirstOrThrow();
    return Number(n);
  }
  const { n } = await filtered(db, f)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** Up to `limit` sessions with their stored share token (null columns when revoked) and sort key, in the asked order. */
export function sessionPage(db: Kysely<Database>, f: SessionPageQuery) {
  const { expr, kind } = SORTS[f.sort];
  let q = filtered(db, f)
    // A session whose share link is revoked is listed too, with share_url null.
    .leftJoin('share_tokens', (j) =>
      j
        .onRef('share_tokens.client_id', '=', 'sessions.client_id')
        .onRef('share_tokens.session_id', '=', 'sessions.session_id'),
    )
    .selectAll('sessions')
    .select(['share_tokens.token', 'share_tokens.token_hash', 'share_tokens.token_sealed'])
    .select(sql<Date | string | number>`${expr}`.as('sort_key'));
  if (f.after !== undefined) {
    const { key, sessionId, clientId } = f.after;
    const cmp = sql.raw(f.order === 'desc' ? '<' : '>');
    const at = sql`CAST(${kind === 'time' ? new Date(key) : key} AS ${CAST[kind]})`;
    q =
      clientId === null
        ? q.where(sql<boolean>`(${expr}, sessions.session_id) ${cmp} (${at}, ${sessionId})`)
        : q.where(
            sql<boolean>`(${expr}, sessions.session_id, sessions.client_id) ${cmp} (${at}, ${sessionId}, ${clientId})`,
          );
  }
  return q
    .orderBy(expr, f.order)
    .orderBy('sessions.session_id', f.order)
    .orderBy('sessions.client_id', f.order)
    .limit(f.limit)
    .execute();
}

/** The clients of the sessions in `clientIds` (null: all), each with its newest client name and its count. */
export function sessionClients(db: Kysely<Database>, clientIds: readonly string[] | null) {
  let q = db
    .selectFrom('sessions')
    .select([
      'client_id',
      sql<string | null>`(array_agg(client ORDER BY uploaded_at DESC) FILTER (WHERE client IS NOT NULL))[1]`.as(
        'client',
      ),
      sql<string>`count(*)`.as('sessions'),
    ])
    .groupBy('client_id');
  if (clientIds !== null) q = q.where('client_id', 'in', clientIds);
  return q.orderBy('client_id').execute();
}

/** Bytes of one client's stored session files (the trigger of migration 0012 keeps them). */
export async function clientStoredBytes(db: Kysely<Database>, clientId: string): Promise<number> {
  const row = await db.selectFrom('storage_usage').select('bytes').where('client_id', '=', clientId).executeTakeFirst();
  return Number(row?.bytes ?? 0);
}

/** Bytes of every stored session file and of the database: what SVC_STORAGE_LIMIT_MB limits. */
export async function totalStoredBytes(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ bytes: string }>`
    SELECT (COALESCE((SELECT SUM(bytes) FROM storage_usage), 0) + pg_database_size(current_database()))::text AS bytes
  `.execute(db);
  return Number(rows[0]?.bytes ?? 0);
}

/** Serialises the writers that check the portal-wide limit (held until the transaction ends). */
export async function lockStorageTotal(db: Kysely<Database>): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('svc:storage-total'))`.execute(db);
}

/** The newest upload of `target` under one client (ties: the greater session id). */
export function latestSessionOfTarget(
  db: Kysely<Database>,
  clientId: string,
  target: string,
): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('target', '=', target)
    .orderBy('uploaded_at', 'desc')
    .orderBy('session_id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
