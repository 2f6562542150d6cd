import type { Kysely } from 'kysely';
import { NO_CLIENT } from '@svc/protocol';
import type { LegacyPrincipal, LicensePrincipal, UserPrincipal } from '../auth/principal.ts';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { type AgentKey, agentOfKey, agentsWithId } from './queries.ts';

export type { AgentKey } from './queries.ts';

/** An agent's client id as answers show it: null for the legacy key's agents without a client (protocol NO_CLIENT). */
export const clientOut = (clientId: string): string | null => (clientId === NO_CLIENT ? null : clientId);

const AGENT_NOT_FOUND = 'Agent not found';
export const AGENT_UNREGISTERED =
  'Agent unregistered: this agent was deregistered on the portal; re-enable it there to resume';
const AGENT_AMBIGUOUS = 'Agent id is ambiguous: it exists under several clients; name one with client_id';
export const AGENT_DEREGISTERED = 'Agent is deregistered';

export const agentNotFound = () => new DomainError('not_found.agent', AGENT_NOT_FOUND);
const agentAmbiguous = (clientIds: string[]) =>
  new DomainError('conflict.agent_ambiguous', AGENT_AMBIGUOUS, { extra: { client_ids: clientIds.map(clientOut) } });

/**
 * The agent an admin or scoped user names: by id among the clients the user sees, narrowed
 * by `client_id` when given (null there names the legacy key's unnamed namespace). An id
 * that exists only outside the user's clients is answered like a missing one (404); an id
 * under several of them without `client_id` is a 409 listing those clients.
 */
export async function agentForUser(
  db: Kysely<Database>,
  user: UserPrincipal,
  agentId: string,
  clientId?: string | null,
): Promise<AgentKey> {
  if (user.clientIds !== null && user.clientIds.length === 0) throw agentNotFound();
  const rows = await agentsWithId(
    db,
    agentId,
    user.clientIds,
    clientId === undefined ? undefined : (clientId ?? NO_CLIENT),
  );
  if (rows.length === 0) throw agentNotFound();
  if (rows.length > 1) throw agentAmbiguous(rows.map((r) => r.client_id));
  return rows[0] as AgentKey;
}

/**
 * The agent a key acts for (poll, status report): a license key's own client's agent once a
 * license key registered or took it over (a legacy-registered row is taken over by the
 * license key's heartbeat, not by a poll); for the legacy key only an agent the legacy key
 * registered and still holds
 * (docs/decisions.md#the-legacy-key-its-own-agents-only-taken-over-by-license-keys). Anything else, including another client's agent or a
 * license-registered one, is answered exactly like a missing agent: a key learns nothing
 * about other tenants. `lock` (inside a transaction): the answer holds until it commits.
 */
export async function agentForKey(
  db: Kysely<Database>,
  principal: LicensePrincipal | LegacyPrincipal,
  agentId: string,
  opts: { lock?: boolean } = {},
): Promise<AgentKey> {
  const clientId = principal.kind === 'license' ? principal.clientId : null;
  const agent = await agentOfKey(db, clientId, agentId, opts.lock === true);
  if (!agent) throw agentNotFound();
  if (agent.deregistered_at) throw new DomainError('forbidden.agent_unregistered', AGENT_UNREGISTERED);
  return agent;
}
