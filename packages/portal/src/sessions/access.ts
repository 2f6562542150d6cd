import type { FastifyRequest } from 'fastify';
import { SESSION_ID_PATTERN, type Permission } from '@svc/protocol';
import { resolveCredential } from '../auth/credentials.ts';
import { scopeOf, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { badRequest, forbidden, HttpError, notFound, unauthorized } from '../http/errors.ts';
import { MAX_SESSION_ID_LENGTH } from './derive.ts';
import type { SessionRow } from './present.ts';

const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

/**
 * D17: sessions are keyed by (client_id, session_id). Sessions uploaded without a client
 * (the legacy key with a file that has no client_id) share one namespace, stored as the
 * empty client id: no real client id is empty, and a key column cannot be NULL. The API
 * shows it as `client_id: null`; a request names it with an empty `client_id=`.
 */
export const NO_CLIENT = '';

export interface SessionRef {
  clientId: string;
  sessionId: string;
}

/** The client id as the API shows it: null for the namespace of sessions without a client. */
export function clientIdOut(clientId: string): string | null {
  return clientId === NO_CLIENT ? null : clientId;
}

export const AMBIGUOUS_SESSION_MESSAGE =
  'Session id is ambiguous: it exists under several clients; name one with client_id';

/**
 * Path safety: a session id from a request must match the id pattern before anything
 * touches the database or the blob store (no `..`, slashes, backslashes, NUL, encodings).
 */
export function parseSessionId(value: unknown, param = 'session'): string {
  if (typeof value !== 'string' || value === '') throw badRequest(`Missing ${param} parameter`);
  if (value.length > MAX_SESSION_ID_LENGTH || !SESSION_ID.test(value))
    throw badRequest(`Invalid ${param} parameter: must match ${SESSION_ID_PATTERN}`);
  return value;
}

export function findSession(ctx: AppContext, ref: SessionRef): Promise<SessionRow | undefined> {
  return ctx.db
    .selectFrom('sessions')
    .selectAll()
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .executeTakeFirst();
}

/**
 * The one session with this id the caller may see: `scope` is the caller's client ids
 * (null: every client), `clientId` the client the request names, if any. A session of a
 * client outside the scope is not there at all: the same 404 as a missing id, so a caller
 * cannot learn which ids other clients use. Several matches (an admin, a multi-client
 * user or the legacy key naming no client) are a 409 listing only the clients in scope.
 */
export async function resolveSession(
  ctx: AppContext,
  scope: readonly string[] | null,
  sessionId: string,
  clientId?: string,
): Promise<SessionRow> {
  if (scope !== null && (scope.length === 0 || (clientId !== undefined && !scope.includes(clientId))))
    throw notFound('Session not found');
  let q = ctx.db.selectFrom('sessions').selectAll().where('session_id', '=', sessionId);
  if (clientId !== undefined) q = q.where('client_id', '=', clientId);
  else if (scope !== null) q = q.where('client_id', 'in', scope);
  const rows = await q.orderBy('client_id').execute();
  const [first] = rows;
  if (first === undefined) throw notFound('Session not found');
  if (rows.length > 1)
    throw new HttpError(409, AMBIGUOUS_SESSION_MESSAGE, {
      extra: { client_ids: rows.map((r) => clientIdOut(r.client_id)) },
    });
  return first;
}

export type SessionAccess =
  | { principal: Principal; session: SessionRow }
  | { principal: null; session: SessionRow; viaShareToken: true };

/**
 * Load a session for a caller. Accepted: a JWT or key whose scope includes the session's
 * client, or (when `shareToken` is allowed) that session's own share token. Missing, or
 * of a client out of scope: 404; ambiguous: 409; no credential 401.
 */
export async function accessSession(
  ctx: AppContext,
  request: FastifyRequest,
  sessionId: string,
  opts: {
    permission: Permission;
    clientId?: string | undefined;
    shareToken?: string | undefined;
    adminOnly?: boolean;
    jwtOnly?: boolean;
  },
): Promise<SessionAccess> {
  const principal = await resolveCredential(ctx, request, opts.permission);
  if (principal === null) {
    if (opts.shareToken === undefined) throw unauthorized();
    // The token is the key of share_tokens and names exactly one session. Same answer for a
    // wrong token, another session's token and a missing session: a token reveals nothing else.
    const session = await ctx.db
      .selectFrom('share_tokens')
      .innerJoin('sessions', (j) =>
        j
          .onRef('sessions.client_id', '=', 'share_tokens.client_id')
          .onRef('sessions.session_id', '=', 'share_tokens.session_id'),
      )
      .selectAll('sessions')
      .where('share_tokens.token', '=', opts.shareToken)
      .executeTakeFirst();
    if (
      !session ||
      session.session_id !== sessionId ||
      (opts.clientId !== undefined && session.client_id !== opts.clientId)
    )
      throw notFound('Session not found');
    return { principal: null, session, viaShareToken: true };
  }
  if (opts.jwtOnly && principal.kind !== 'user') throw unauthorized();
  if (opts.adminOnly && !(principal.kind === 'user' && principal.admin)) throw forbidden('Admin access required');
  const session = await resolveSession(ctx, scopeOf(principal), sessionId, opts.clientId);
  return { principal, session };
}
