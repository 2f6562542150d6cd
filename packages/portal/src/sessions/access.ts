import { isValidSessionId, SESSION_ID_PATTERN } from '@svc/protocol';
import { scopeOf, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { clientIdOut } from './present.ts';
import { type SessionRow, sessionsWithId } from './queries.ts';
import { findSessionByShareToken } from './share-queries.ts';

const AMBIGUOUS_SESSION_MESSAGE = 'Session id is ambiguous: it exists under several clients; name one with client_id';

export const sessionNotFound = (): DomainError => new DomainError('not_found.session', 'Session not found');

/** No credential where one is needed: the same plain 401 as a refused JWT. */
const noCredential = (): DomainError => new DomainError('unauthorized.credential', 'Unauthorized');

/**
 * Path safety: a session id from a request must match the id pattern before anything
 * touches the database or the blob store (no `..`, slashes, backslashes, NUL, encodings).
 */
export function parseSessionId(value: unknown, param = 'session'): string {
  if (typeof value !== 'string' || value === '')
    throw new DomainError('invalid.session_id', `Missing ${param} parameter`);
  if (!isValidSessionId(value))
    throw new DomainError('invalid.session_id', `Invalid ${param} parameter: must match ${SESSION_ID_PATTERN}`);
  return value;
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
    throw sessionNotFound();
  const rows = await sessionsWithId(ctx.db, sessionId, { clientId, scope });
  const [first] = rows;
  if (first === undefined) throw sessionNotFound();
  if (rows.length > 1)
    throw new DomainError('conflict.ambiguous_session', AMBIGUOUS_SESSION_MESSAGE, {
      extra: { client_ids: rows.map((r) => clientIdOut(r.client_id)) },
    });
  return first;
}

/**
 * The session a caller may use: `caller` is the principal of the request's credential (null
 * when it has none), already checked for the endpoint's permission. Accepted: a principal
 * whose scope includes the session's client, or (when `shareToken` is given) that session's
 * own share token. Missing, or of a client out of scope: 404; ambiguous: 409; no credential 401.
 */
export async function accessSession(
  ctx: AppContext,
  caller: Principal | null,
  sessionId: string,
  opts: { clientId?: string | undefined; shareToken?: string | undefined },
): Promise<SessionRow> {
  if (caller !== null) return resolveSession(ctx, scopeOf(caller), sessionId, opts.clientId);
  if (opts.shareToken === undefined) throw noCredential();
  // The token names exactly one session. Same answer for a wrong token, another session's
  // token and a missing session: a token reveals nothing else.
  const session = await findSessionByShareToken(ctx.db, opts.shareToken);
  if (
    !session ||
    session.session_id !== sessionId ||
    (opts.clientId !== undefined && session.client_id !== opts.clientId)
  )
    throw sessionNotFound();
  return session;
}
