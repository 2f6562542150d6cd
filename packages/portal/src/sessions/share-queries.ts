import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { SessionRef, SessionRow } from './queries.ts';
import { type StoredShareToken, shareTokenHash } from './share-seal.ts';

/** The share_tokens table (share.ts, commit.ts): rows hold a token's hash and sealed copy (share-seal.ts). */

/** The session a presented share token opens, or undefined: looked up by the token's hash only. */
export function findSessionByShareToken(db: Kysely<Database>, token: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('share_tokens')
    .innerJoin('sessions', (j) =>
      j
        .onRef('sessions.client_id', '=', 'share_tokens.client_id')
        .onRef('sessions.session_id', '=', 'share_tokens.session_id'),
    )
    .selectAll('sessions')
    .where('share_tokens.token_hash', '=', shareTokenHash(token))
    .executeTakeFirst();
}

/** The session's stored share token; undefined while its link is revoked. */
export function storedShareTokenOf(db: Kysely<Database>, ref: SessionRef): Promise<StoredShareToken | undefined> {
  return db
    .selectFrom('share_tokens')
    .select(['token', 'token_hash', 'token_sealed'])
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .executeTakeFirst();
}

export async function insertShareToken(
  db: Kysely<Database>,
  ref: SessionRef,
  stored: { token_hash: string; token_sealed: string },
  createdAt?: Date,
): Promise<void> {
  await db
    .insertInto('share_tokens')
    .values({
      client_id: ref.clientId,
      session_id: ref.sessionId,
      ...stored,
      ...(createdAt === undefined ? {} : { created_at: createdAt }),
    })
    .execute();
}

export async function replaceShareToken(
  db: Kysely<Database>,
  ref: SessionRef,
  stored: { token_hash: string; token_sealed: string },
  createdAt: Date,
): Promise<void> {
  await db
    .updateTable('share_tokens')
    .set({ token: null, ...stored, created_at: createdAt })
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .execute();
}

/** Removes the session's share token; false when it had none. */
export async function deleteShareToken(db: Kysely<Database>, ref: SessionRef): Promise<boolean> {
  const removed = await db
    .deleteFrom('share_tokens')
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .returning('client_id')
    .executeTakeFirst();
  return removed !== undefined;
}

/** Up to `limit` tokens still stored in clear (written before migration 0020). */
export async function clearShareTokens(
  db: Kysely<Database>,
  limit: number,
): Promise<{ token: string; token_hash: string }[]> {
  const rows = await db
    .selectFrom('share_tokens')
    .select(['token', 'token_hash'])
    .where('token', 'is not', null)
    .limit(limit)
    .execute();
  return rows.map((r) => ({ token: r.token as string, token_hash: r.token_hash }));
}

/**
 * Replace clear tokens by their sealed copies, each only while its row still holds that clear
 * token (another replica starting at once may have sealed it first); how many it replaced.
 */
export async function storeSealedShareTokens(
  db: Kysely<Database>,
  rows: { token: string; token_hash: string; token_sealed: string }[],
): Promise<number> {
  const result = await sql`
    UPDATE share_tokens s SET token_sealed = v.token_sealed, token = NULL
    FROM unnest(${rows.map((r) => r.token_hash)}::text[], ${rows.map((r) => r.token)}::text[],
                ${rows.map((r) => r.token_sealed)}::text[]) AS v(token_hash, token, token_sealed)
    WHERE s.token_hash = v.token_hash AND s.token = v.token`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** One sealed token, to check the key opens them. */
export function oneSealedShareToken(
  db: Kysely<Database>,
): Promise<{ token_hash: string; token_sealed: string | null } | undefined> {
  return db
    .selectFrom('share_tokens')
    .select(['token_hash', 'token_sealed'])
    .where('token_sealed', 'is not', null)
    .limit(1)
    .executeTakeFirst();
}
