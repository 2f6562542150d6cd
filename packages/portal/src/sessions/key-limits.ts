import type { Kysely } from 'kysely';
import type { SessionStatus } from '@svc/protocol';
import type { Principal } from '../auth/principal.ts';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { lockTarget } from '../records/queries.ts';
import { type KeyDeleteFacts, keyDeleteFacts } from './key-limits-queries.ts';
import { lockSessionKey, type SessionRow } from './queries.ts';
import { recordTarget } from './records-merge.ts';

/**
 * What a scanner key may do to a session's history (docs/api.md#sessions).
 * Keys are for upload, refresh, license check, heartbeat, poll and status report (docs/api.md#credentials); a stolen scanner config must not be able to erase or bury a
 * client's record. So a key never changes a review status (archiving included), and deletes only a
 * session it uploaded itself, shortly after the upload, while nobody has triaged it: what a
 * smoke test needs to clean up after itself. Everything else takes an identity token.
 */

/** How long after a session's first upload the key that uploaded it may still delete it. */
export const KEY_DELETE_WINDOW_MINUTES = 15;
const WINDOW_MS = KEY_DELETE_WINDOW_MINUTES * 60_000;

const BY_IDENTITY = 'takes an identity token (X-Identity-Token) with update:status';

/** PATCH /api/sessions with a key: refused before the session is looked up, so it reveals nothing. */
export function refuseKeyStatusChange(principal: Principal, status: SessionStatus): void {
  if (principal.kind === 'user') return;
  if (status === 'archived')
    throw new DomainError('forbidden.key_archive', `A key cannot archive a session: archiving ${BY_IDENTITY}`);
  throw new DomainError(
    'forbidden.key_review_status',
    `A key cannot change a session's review status: that ${BY_IDENTITY}`,
  );
}

/** Why this triaged session is no longer a key's to delete; null while nobody has triaged it. */
function triage(f: KeyDeleteFacts): string | null {
  if (f.status_changed) return 'its review status was changed';
  if (f.noted) return 'a note was left on it';
  if (f.remediation_named) return 'a remediation update named it';
  if (f.findings_triaged) return 'a person changed a finding of its target since its upload';
  return null;
}

/** The refusal of a key's delete, or null when the key may delete the session. */
function keyDeleteRefusal(
  key: Exclude<Principal, { kind: 'user' }>,
  sessionId: string,
  facts: KeyDeleteFacts,
  now: Date,
): DomainError | null {
  const uploader = key.kind === 'license' ? key.license.id : null;
  const deleting = `deleting it ${BY_IDENTITY}`;
  if (facts.license_id !== uploader)
    return new DomainError(
      'forbidden.key_delete_not_uploader',
      `Session ${sessionId} was not uploaded with this key: a key may delete only a session it uploaded itself; ${deleting}`,
    );
  if (now.getTime() - facts.first_uploaded_at.getTime() > WINDOW_MS)
    return new DomainError(
      'forbidden.key_delete_window',
      `Session ${sessionId} was uploaded more than ${KEY_DELETE_WINDOW_MINUTES} minutes ago: a key may delete a session it uploaded only within ${KEY_DELETE_WINDOW_MINUTES} minutes of the upload; ${deleting}`,
    );
  const why = triage(facts);
  if (why !== null)
    return new DomainError(
      'forbidden.key_delete_triaged',
      `Session ${sessionId} has been triaged (${why}): a key may delete only a session nobody has triaged; ${deleting}`,
    );
  return null;
}

/**
 * The check a key's delete runs in the delete's own transaction (sessions/delete.ts), so nothing
 * can triage the session between the check and the delete: first the session's upload lock (a
 * re-upload of it waits; an upload holding it finishes first), then its target's records lock
 * (a triage waits), then the row (a status change waits). Null for an identity: no limits.
 */
export function keyDeleteGuard(
  principal: Principal,
  session: SessionRow,
  now: () => Date,
): ((trx: Kysely<Database>) => Promise<void>) | null {
  if (principal.kind === 'user') return null;
  return async (trx) => {
    const ref = { clientId: session.client_id, sessionId: session.session_id };
    const target = recordTarget(session.target);
    await lockSessionKey(trx, ref);
    await lockTarget(trx, { clientId: ref.clientId, target });
    const facts = await keyDeleteFacts(trx, ref, target);
    // Gone meanwhile: the delete that follows finds nothing and answers 404.
    if (facts === undefined) return;
    const refusal = keyDeleteRefusal(principal, ref.sessionId, facts, now());
    if (refusal !== null) throw refusal;
  };
}
