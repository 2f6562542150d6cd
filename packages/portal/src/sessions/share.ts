import { randomBytes } from 'node:crypto';
import { isShareToken, NO_CLIENT } from '@svc/protocol';
import type { Kysely } from 'kysely';
import { recordAuditEvent } from '../audit/record.ts';
import { ConfigError } from '../config/index.ts';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import type { DomainEvent } from '../events/bus.ts';
import { KEY_FILE } from '../identity/key-encryption.ts';
import { sessionNotFound } from './access.ts';
import { clientIdOut, shareUrl } from './present.ts';
import { lockSessionClient, lockSessionClientName, type SessionRef, type SessionRow } from './queries.ts';
import {
  clearShareTokens,
  deleteShareToken,
  findSessionByShareToken,
  insertShareToken,
  oneSealedShareToken,
  replaceShareToken,
  storedShareTokenOf,
  storeSealedShareTokens,
} from './share-queries.ts';
import type { ShareTokenSeal } from './share-seal.ts';

/** 32 random bytes rendered as 64 hex characters. */
export function newShareToken(): string {
  return randomBytes(32).toString('hex');
}

/**
 * A share token from a request, read case-insensitively. Returns null when it is missing
 * (and not required); a malformed one is refused before any lookup.
 */
export function parseShareToken(value: string | undefined, opts: { required: boolean }): string | null {
  if (value === undefined || value === '') {
    if (opts.required) throw new DomainError('invalid.share_token', 'Missing token parameter');
    return null;
  }
  const token = value.toLowerCase();
  if (!isShareToken(token))
    throw new DomainError('invalid.share_token', 'Invalid token parameter: must be 64 hex characters');
  return token;
}

/** The session's share token, to show its link again; null while the link is revoked. */
export async function shareTokenOf(
  db: Kysely<Database>,
  seal: ShareTokenSeal,
  ref: SessionRef,
): Promise<string | null> {
  const stored = await storedShareTokenOf(db, ref);
  return stored === undefined ? null : seal.open(stored);
}

/**
 * An audited scan_completed as its webhook subscribers get it when a sweep sends it (its process
 * stopped first, webhooks/dispatcher.ts): the audit row keeps the link redacted, so it is the
 * link of the session's token of now, or null once revoked or deleted.
 */
export async function withShareLink(
  db: Kysely<Database>,
  seal: ShareTokenSeal,
  baseUrl: string,
  event: DomainEvent,
): Promise<DomainEvent> {
  if (event.event_type !== 'scan_completed' || event.session_id === null || event.data['share_url'] == null)
    return event;
  const token = await shareTokenOf(db, seal, { clientId: event.client_id ?? NO_CLIENT, sessionId: event.session_id });
  return { ...event, secret_data: { share_url: token === null ? null : shareUrl(baseUrl, token) } };
}

/** The session a share token opens (looked up by its hash), or undefined. */
export function findSharedSession(ctx: AppContext, token: string): Promise<SessionRow | undefined> {
  return findSessionByShareToken(ctx.db, token);
}

/** The session a share token opens; an unknown token is a 404. */
export async function sharedSession(ctx: AppContext, token: string): Promise<SessionRow> {
  const row = await findSharedSession(ctx, token);
  if (row === undefined) throw new DomainError('not_found.share_link', 'Share link not found');
  return row;
}

export interface ShareChange {
  ref: SessionRef;
  actor: string;
}

/**
 * Give a session a new share token: the old token stops opening anything the
 * moment this commits (/api/share, /share/ and /api/download?token= all look the token up).
 * Also how a revoked link is issued again. Audited as `share_rotated`, without the token.
 * A session gone meanwhile (deleted) is a 404.
 */
export async function rotateShareToken(ctx: AppContext, c: ShareChange): Promise<string> {
  const now = ctx.now();
  const issued = await ctx.db.transaction().execute(async (trx) => {
    // Serialises with a delete or re-upload of the session, which lock the same row.
    const session = await lockSessionClient(trx, c.ref);
    if (session === undefined) return undefined;
    const token = newShareToken();
    const hadLink = (await storedShareTokenOf(trx, c.ref)) !== undefined;
    if (hadLink) await replaceShareToken(trx, c.ref, ctx.shareTokens.seal(token), now);
    else await insertShareToken(trx, c.ref, ctx.shareTokens.seal(token), now);
    await recordAuditEvent(trx, {
      event_type: 'share_rotated',
      actor: c.actor,
      session_id: c.ref.sessionId,
      client_id: clientIdOut(session.client_id),
      data: {
        session_id: c.ref.sessionId,
        client: session.client,
        client_id: clientIdOut(session.client_id),
        had_link: hadLink,
        rotated_by: c.actor,
        rotated_at: now.toISOString(),
      },
    });
    return token;
  });
  if (issued === undefined) throw sessionNotFound();
  return issued;
}

/**
 * Take a session's share link away: afterwards no token opens it until the link
 * is rotated again (or the session is re-uploaded, whose answer must carry one). Audited as
 * `share_revoked` when there was a link; false when there was none.
 */
export async function revokeShareToken(ctx: AppContext, c: ShareChange): Promise<boolean> {
  const now = ctx.now();
  return ctx.db.transaction().execute(async (trx) => {
    // The same row lock as a rotation: a rotation racing this revocation never hands out a
    // token that the revocation then removes (or that it updated away under our feet).
    const session = await lockSessionClientName(trx, c.ref);
    if (session === undefined) return false;
    if (!(await deleteShareToken(trx, c.ref))) return false;
    await recordAuditEvent(trx, {
      event_type: 'share_revoked',
      actor: c.actor,
      session_id: c.ref.sessionId,
      client_id: clientIdOut(c.ref.clientId),
      data: {
        session_id: c.ref.sessionId,
        client: session.client,
        client_id: clientIdOut(c.ref.clientId),
        revoked_by: c.actor,
        revoked_at: now.toISOString(),
      },
    });
    return true;
  });
}

const SEAL_BATCH = 1000;

/**
 * At start: seal every token still stored in clear (written before migration 0020) and empty
 * its clear column, then check that the key opens a sealed token, so a wrong key is a clear
 * start-up error rather than a console that cannot show links.
 */
export async function sealStoredShareTokens(db: Kysely<Database>, seal: ShareTokenSeal): Promise<number> {
  let sealed = 0;
  for (;;) {
    const rows = await clearShareTokens(db, SEAL_BATCH);
    if (rows.length === 0) break;
    const stored = await storeSealedShareTokens(
      db,
      rows.map((r) => ({ ...r, token_sealed: seal.seal(r.token).token_sealed })),
    );
    // None replaced: another replica starting at once is sealing these; it finishes them.
    if (stored === 0) break;
    sealed += stored;
  }
  const sample = await oneSealedShareToken(db);
  if (sample?.token_sealed != null && !seal.opens(sample.token_hash, sample.token_sealed))
    throw new ConfigError(
      'SVC_IDENTITY_KEY_ENCRYPTION_KEY',
      `does not decrypt the stored share tokens: start with the key (or the data directory's ${KEY_FILE}) this database was first started with`,
    );
  return sealed;
}
