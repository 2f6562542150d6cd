import type { Readable, Writable } from 'node:stream';
import type pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';

/** The migrator's own bookkeeping: restore re-creates it by migrating, so it is not copied. */
const MIGRATION_TABLES = ['schema_migrations', 'schema_migrations_lock'];

export interface TableShape {
  name: string;
  /** Stored columns in table order (generated columns are computed again on load). */
  columns: string[];
}

export interface SequenceValue {
  name: string;
  last_value: string;
  is_called: boolean;
}

/** One connection: every statement of a backup must see the same snapshot. */
export type Conn = pg.ClientBase;

const ident = (conn: Conn, name: string) => conn.escapeIdentifier(name);

/** Opens the snapshot the whole dump and the list of objects are read from. */
export async function beginSnapshot(conn: Conn): Promise<void> {
  await conn.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
}

/**
 * The portal's tables in the current schema, each after the tables its foreign keys point at,
 * so a load in this order satisfies every key as it goes.
 */
export async function portalTables(conn: Conn): Promise<TableShape[]> {
  const { rows } = await conn.query<{ name: string; columns: string[]; refs: string[] }>(
    `SELECT c.relname AS name,
            ARRAY(SELECT a.attname FROM pg_attribute a
                  WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
                  ORDER BY a.attnum)::text[] AS columns,
            ARRAY(SELECT DISTINCT r.relname FROM pg_constraint k JOIN pg_class r ON r.oid = k.confrelid
                  WHERE k.conrelid = c.oid AND k.contype = 'f' AND k.confrelid <> c.oid)::text[] AS refs
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind = 'r' AND NOT (c.relname = ANY($1))
     ORDER BY c.relname`,
    [MIGRATION_TABLES],
  );
  const byName = new Map(rows.map((r) => [r.name, r]));
  const ordered: TableShape[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]) => {
    if (state.get(name) === 'done') return;
    if (state.get(name) === 'visiting') throw new Error(`foreign keys form a cycle: ${[...path, name].join(' -> ')}`);
    const row = byName.get(name);
    if (row === undefined) return;
    state.set(name, 'visiting');
    for (const ref of row.refs) visit(ref, [...path, name]);
    state.set(name, 'done');
    ordered.push({ name: row.name, columns: row.columns });
  };
  for (const r of rows) visit(r.name, []);
  return ordered;
}

export async function sequenceValues(conn: Conn): Promise<SequenceValue[]> {
  const { rows } = await conn.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = current_schema() AND c.relkind = 'S' ORDER BY c.relname`,
  );
  const out: SequenceValue[] = [];
  for (const { name } of rows) {
    const r = await conn.query<{ last_value: string; is_called: boolean }>(
      `SELECT last_value::text AS last_value, is_called FROM ${ident(conn, name)}`,
    );
    const v = r.rows[0];
    if (v) out.push({ name, ...v });
  }
  return out;
}

/** The table's rows in COPY's text format. */
export function copyOut(conn: Conn, table: TableShape): Readable & { rowCount: number } {
  const cols = table.columns.map((c) => ident(conn, c)).join(', ');
  return conn.query(copyTo(`COPY ${ident(conn, table.name)} (${cols}) TO STDOUT`));
}

export function copyIn(conn: Conn, table: TableShape): Writable & { rowCount: number } {
  const cols = table.columns.map((c) => ident(conn, c)).join(', ');
  return conn.query(copyFrom(`COPY ${ident(conn, table.name)} (${cols}) FROM STDIN`));
}

export interface ReferencedObject {
  key: string;
  size: number;
  sha256: string;
}

/**
 * Every object a session row points at (sessions.files), with the size and checksum its row
 * recorded: the same set the orphan sweep keeps (sessions/sweep.ts).
 */
export async function referencedObjects(conn: Conn): Promise<ReferencedObject[]> {
  const { rows } = await conn.query<ReferencedObject>(
    `SELECT DISTINCT f.value->>'key' AS key, (f.value->>'size')::bigint::float8 AS size, f.value->>'sha256' AS sha256
     FROM sessions s, jsonb_each(s.files) f ORDER BY 1`,
  );
  return rows;
}

/** Tables of the target that already hold rows (restore refuses them). */
export async function tablesWithRows(conn: Conn): Promise<string[]> {
  const tables = await portalTables(conn);
  const full: string[] = [];
  for (const t of tables) {
    const { rowCount } = await conn.query(`SELECT 1 FROM ${ident(conn, t.name)} LIMIT 1`);
    if ((rowCount ?? 0) > 0) full.push(t.name);
  }
  return full;
}

/**
 * User triggers (storage_usage, scanned_at) would recompute what the dump already holds, and a
 * duplicate storage_usage row would fail the load; foreign keys stay on.
 */
export async function setUserTriggers(conn: Conn, tables: TableShape[], on: boolean): Promise<void> {
  for (const t of tables)
    await conn.query(`ALTER TABLE ${ident(conn, t.name)} ${on ? 'ENABLE' : 'DISABLE'} TRIGGER USER`);
}

export async function setSequences(conn: Conn, values: SequenceValue[]): Promise<void> {
  for (const s of values)
    await conn.query('SELECT setval($1::regclass, $2::bigint, $3)', [ident(conn, s.name), s.last_value, s.is_called]);
}

/**
 * Point the loaded rows at the objects' new keys (a store names the objects it writes): the
 * session's files and the findings index's record of the file it was built from (and of the file
 * its due counts count, migration 0043).
 */
export async function remapObjectKeys(conn: Conn, map: Map<string, string>): Promise<void> {
  await conn.query(
    'CREATE TEMP TABLE restore_key_map (old_key text PRIMARY KEY, new_key text NOT NULL) ON COMMIT DROP',
  );
  await conn.query('INSERT INTO restore_key_map SELECT * FROM unnest($1::text[], $2::text[])', [
    [...map.keys()],
    [...map.values()],
  ]);
  await conn.query(
    `UPDATE sessions s SET files = (
       SELECT jsonb_object_agg(f.key, CASE WHEN m.new_key IS NULL THEN f.value
                                           ELSE jsonb_set(f.value, '{key}', to_jsonb(m.new_key)) END)
       FROM jsonb_each(s.files) f LEFT JOIN restore_key_map m ON m.old_key = f.value->>'key')
     WHERE s.files <> '{}'::jsonb`,
  );
  // An archive taken before migration 0043 restores at its schema, without due counts.
  const { rows } = await conn.query(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = 'session_findings_state' AND column_name = 'due_counted_key'`,
  );
  const dueCounted =
    rows.length === 0
      ? ''
      : ', due_counted_key = CASE WHEN st.due_counted_key = st.file_key THEN m.new_key ELSE st.due_counted_key END';
  await conn.query(
    `UPDATE session_findings_state st SET file_key = m.new_key${dueCounted}
     FROM restore_key_map m WHERE m.old_key = st.file_key`,
  );
}

/** Names of the migrations applied to the target, oldest first; [] for an empty database. */
export async function appliedMigrations(conn: Conn): Promise<string[]> {
  const { rows: exists } = await conn.query(`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`);
  if (!(exists[0] as { present: boolean }).present) return [];
  const { rows } = await conn.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
  return rows.map((r) => r.name);
}

/**
 * Everything stored sealed under the key-encryption key (identity/key-encryption.ts), with the
 * row id that is its authenticated data: the signing keys and the webhook signing secrets.
 */
export async function sealedSecrets(conn: Conn): Promise<{ what: string; id: string; sealed: string }[]> {
  const { rows } = await conn.query<{ what: string; id: string; sealed: string }>(
    `SELECT 'signing key' AS what, kid AS id, private_jwk_encrypted AS sealed
       FROM identity_signing_keys WHERE private_jwk_encrypted IS NOT NULL
     UNION ALL
     SELECT 'webhook secret', id, signing_secret_encrypted
       FROM webhook_subscriptions WHERE signing_secret_encrypted IS NOT NULL`,
  );
  return rows;
}

/** One sealed share token (migration 0020 and later), to check the key opens them; undefined when there is none. */
export async function sealedShareTokenSample(conn: Conn): Promise<{ hash: string; sealed: string } | undefined> {
  const { rows: column } = await conn.query(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = 'share_tokens' AND column_name = 'token_sealed'`,
  );
  if (column.length === 0) return undefined;
  const { rows } = await conn.query<{ hash: string; sealed: string }>(
    'SELECT token_hash AS hash, token_sealed AS sealed FROM share_tokens WHERE token_sealed IS NOT NULL LIMIT 1',
  );
  return rows[0];
}

/**
 * Webhook delivery bodies holding a share token in clear: scan_completed's, as versions before
 * migration 0036 stored them, until a portal of this version seals them at its start (a sealed
 * body's `body` has the token redacted).
 */
export async function clearDeliveryBodyCount(conn: Conn): Promise<number> {
  const { rows } = await conn.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_type = 'scan_completed' AND body ~ 'token=[0-9A-Fa-f]{64}'`,
  );
  return rows[0]?.n ?? 0;
}

/** Share tokens stored in clear: every token before migration 0020, none once the portal sealed them. */
export async function clearShareTokenCount(conn: Conn): Promise<number> {
  const { rows } = await conn.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM share_tokens WHERE token IS NOT NULL',
  );
  return rows[0]?.n ?? 0;
}
