import type { SessionStatus } from '@svc/protocol';
import { actorOf, scopeOf, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { resolveSession, sessionNotFound } from './access.ts';
import { storable } from './derive.ts';
import { refuseKeyStatusChange } from './key-limits.ts';
import { changeStatus } from './status-queries.ts';

interface StatusRequest {
  sessionId: string;
  /** The client the request names, if any (docs/api.md#ids-are-per-client). */
  clientId: string | undefined;
  status: SessionStatus;
  note: string | undefined;
}

/**
 * A caller's status change (docs/api.md#sessions), an identity's only (key-limits.ts): every
 * change is kept in the history and published as `status_changed`; the current status again
 * only records the note. The scope check is part of the statement; only a refusal asks again
 * which answer it is (404, or 409 for an ambiguous id, as every session endpoint gives them),
 * before a bad note's 400.
 */
export async function updateSessionStatus(
  ctx: AppContext,
  principal: Principal,
  r: StatusRequest,
): Promise<{ previous: SessionStatus; changed: boolean; changedAt: Date }> {
  refuseKeyStatusChange(principal, r.status);
  const scope = scopeOf(principal);
  const refuse = async (err: DomainError): Promise<never> => {
    await resolveSession(ctx, scope, r.sessionId, r.clientId);
    throw err;
  };
  if (r.note !== undefined && !storable(r.note))
    return refuse(
      new DomainError('invalid.note', 'Invalid note: NUL characters and unpaired surrogates are not allowed'),
    );
  const now = ctx.now();
  const changed = await changeStatus(ctx.db, {
    sessionId: r.sessionId,
    clientId: r.clientId,
    scope,
    status: r.status,
    note: r.note,
    actor: actorOf(principal),
    now,
  });
  if (!changed) return refuse(sessionNotFound());
  if (changed.event) ctx.events.publish(changed.event);
  return { previous: changed.previous, changed: changed.event !== null, changedAt: now };
}
