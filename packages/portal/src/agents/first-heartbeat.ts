import type { Kysely } from 'kysely';
import type { ReceivedHeartbeat } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import {
  agentRegistration,
  insertAgent,
  licenseAgentExists,
  lockLegacyAgent,
  lockLicense,
  moveAgent,
  registeredAgentsOfLicense,
} from './queries.ts';
import { AGENT_UNREGISTERED, clientOut, NO_CLIENT } from './resolve.ts';

const agentLimitMessage = (max: number) => `Agent limit reached (${max})`;
const AGENT_LICENSE_BOUND = 'Agent is registered with a license key: the legacy key cannot act for it';
const licenseBound = () => new DomainError('forbidden.agent_license_bound', AGENT_LICENSE_BOUND);

/**
 * The heartbeat's slow path, when its one statement updated nothing. Registers a new agent
 * (no approval, no allowlist) and audits `agent_first_seen`, or finds why not:
 * - 'exists': the agent is there and registered (a concurrent first heartbeat of the same
 *   agent committed it, or a legacy agent was moved to the client_id its daemon now
 *   reports): the caller runs the heartbeat statement again. Concurrent first heartbeats of
 *   one agent therefore all succeed.
 * - a deregistered agent: 403; the legacy key naming a license-registered agent: 403.
 * A license key registers under its own client within its agent limit (D11: registered
 * agents first seen with that key). Registrations of one key are serialised by a lock on
 * its license row, taken on this path only, so the limit holds exactly under concurrency.
 */
export async function registerAgent(
  ctx: AppContext,
  principal: LicensePrincipal | LegacyPrincipal,
  hb: ReceivedHeartbeat,
  now: Date,
): Promise<'registered' | 'exists'> {
  const license = principal.kind === 'license' ? principal.license : null;
  const clientId = principal.kind === 'license' ? principal.clientId : (hb.clientId ?? NO_CLIENT);
  const event = await ctx.db.transaction().execute(async (trx) => {
    if (license !== null) {
      await lockLicense(trx, license.id);
      // After the lock: a sibling's registration of this agent has committed and is seen.
      const existing = await agentRegistration(trx, clientId, hb.agentId);
      if (existing) return existingOutcome(existing.deregistered_at);
      if (license.max_agents !== null) {
        if ((await registeredAgentsOfLicense(trx, license.id)) >= license.max_agents)
          throw new DomainError('forbidden.agent_limit', agentLimitMessage(license.max_agents));
      }
    } else {
      const outcome = await legacyExisting(trx, hb, clientId);
      if (outcome !== null) return outcome;
    }
    const inserted = await insertAgent(trx, {
      agent_id: hb.agentId,
      client_id: clientId,
      license_id: license?.id ?? null,
      key_tier: principal.tier,
      version: hb.version,
      sent_at: hb.sentAt,
      status: hb.status,
      uptime_seconds: hb.uptimeSeconds,
      schedules: hb.schedules === null ? null : JSON.stringify(hb.schedules),
      system_info: hb.systemInfo === null ? null : JSON.stringify(hb.systemInfo),
      received_at: now,
      first_seen_at: now,
      deregistered_at: null,
    });
    if (!inserted) return 'exists' as const;
    return recordAuditEvent(trx, {
      event_type: 'agent_first_seen',
      actor: hb.agentId,
      client_id: clientOut(clientId),
      data: {
        agent_id: hb.agentId,
        client_id: clientOut(clientId),
        version: hb.version,
        license_id: license?.id ?? null,
        tier: principal.tier,
      },
    });
  });
  if (event === 'exists') return event;
  ctx.events.publish(event);
  return 'registered';
}

function existingOutcome(deregisteredAt: Date | null): 'exists' {
  if (deregisteredAt) throw new DomainError('forbidden.agent_unregistered', AGENT_UNREGISTERED);
  return 'exists';
}

/**
 * The legacy key's agent with this id, if any: it is found by id (the legacy key has no
 * client) and follows the client_id its daemon reports, moved with its commands and
 * memberships (ON UPDATE CASCADE). A license-registered agent under that client_id is
 * never touched.
 */
async function legacyExisting(
  trx: Kysely<Database>,
  hb: ReceivedHeartbeat,
  clientId: string,
): Promise<'exists' | null> {
  const legacy = await lockLegacyAgent(trx, hb.agentId);
  const bound = () => licenseAgentExists(trx, clientId, hb.agentId);
  if (!legacy) {
    if (await bound()) throw licenseBound();
    return null;
  }
  existingOutcome(legacy.deregistered_at);
  if (hb.clientId !== null && legacy.client_id !== clientId) {
    if (await bound()) throw licenseBound();
    try {
      await moveAgent(trx, legacy.client_id, clientId, hb.agentId);
    } catch (err) {
      // A license key registered the same id under that client meanwhile.
      if ((err as { code?: string }).code === '23505') throw licenseBound();
      throw err;
    }
  }
  return 'exists';
}
