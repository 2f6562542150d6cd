import type { Readable } from 'node:stream';
import { SESSION_FILES, type SessionFileName, type ShareResponse } from '@svc/protocol';
import { BlobNotFoundError } from '../blobs/store.ts';
import type { AppContext } from '../context.ts';
import { badRequest, HttpError } from '../http/errors.ts';
import { findSession } from '../sessions/access.ts';
import type { SessionRow } from '../sessions/present.ts';

/** Reading session files and share tokens, for /api/download, /api/share and the share page. */

const SHARE_TOKEN = /^[0-9a-f]{64}$/;

/**
 * A share token from a request: 64 hex characters (SPEC), read case-insensitively.
 * Returns null when it is missing; a malformed one is a 400 before any lookup.
 */
export function parseShareToken(value: string | undefined, opts: { required: boolean }): string | null {
  if (value === undefined || value === '') {
    if (opts.required) throw badRequest('Missing token parameter');
    return null;
  }
  const token = value.toLowerCase();
  if (!SHARE_TOKEN.test(token)) throw badRequest('Invalid token parameter: must be 64 hex characters');
  return token;
}

/** The session a share token opens, or undefined. The token is the primary key of share_tokens. */
export function findSharedSession(ctx: AppContext, token: string): Promise<SessionRow | undefined> {
  return ctx.db
    .selectFrom('share_tokens')
    .innerJoin('sessions', (j) =>
      j
        .onRef('sessions.client_id', '=', 'share_tokens.client_id')
        .onRef('sessions.session_id', '=', 'share_tokens.session_id'),
    )
    .selectAll('sessions')
    .where('share_tokens.token', '=', token)
    .executeTakeFirst();
}

/** Stored file names of a session, in SPEC's order. */
export function fileNamesOf(row: SessionRow): SessionFileName[] {
  return SESSION_FILES.filter((name) => row.files[name] !== undefined);
}

/** D8: what a share-token holder sees. No client_id, no blob keys, no other session. */
export function presentShare(row: SessionRow): ShareResponse {
  const m = row.metadata;
  return {
    session_id: row.session_id,
    client: row.client,
    target: row.target,
    risk_score: row.risk_score,
    risk_grade: row.risk_grade,
    total_findings: m.total_findings,
    total_hosts: m.total_hosts,
    severity_summary: m.severity_summary,
    uploaded_at: row.uploaded_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    has_exec_summary: row.files['exec_summary.html'] !== undefined,
    files: fileNamesOf(row),
  };
}

/**
 * Open one stored file of a session for reading. Objects are immutable and a refresh or
 * re-upload deletes the old object right after committing the new one, so a row read a
 * moment ago may point at an object that is already gone: then the row is read again and
 * the current object opened (once open, a later delete does not cut the stream short).
 * Returns null when the session or file no longer exists, or the session changed hands
 * in between; a committed row whose object is missing is a storage failure (500).
 */
export async function openSessionFile(
  ctx: AppContext,
  session: SessionRow,
  file: SessionFileName,
): Promise<{ stream: Readable; size: number; row: SessionRow } | null> {
  let row = session;
  for (let attempt = 0; attempt < 3; attempt++) {
    const entry = row.files[file];
    if (entry === undefined) return null;
    try {
      const blob = await ctx.blobs.get(entry.key);
      return { ...blob, row };
    } catch (err) {
      if (!(err instanceof BlobNotFoundError)) throw err;
    }
    const fresh = await findSession(ctx, { clientId: row.client_id, sessionId: row.session_id });
    if (fresh === undefined || fresh.client_id !== session.client_id) return null;
    if (fresh.files[file]?.key === entry.key) break;
    row = fresh;
  }
  ctx.logger.error({ session_id: session.session_id, file }, 'stored file of a committed session is missing');
  throw new HttpError(500, 'Storage failure: the file could not be read');
}
