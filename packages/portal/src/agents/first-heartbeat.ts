import type { CompiledQuery, Kysely } from 'kysely';
import { NO_CLIENT, type AuditEvent, type ReceivedHeartbeat } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { lockLicense } from '../licenses/queries.ts';
import { type Claim, type ClaimedRow, claimOf } from './claim-sql.ts';
import { failAgentCommands } from './lifecycle-queries.ts';
import {
  agentHasHistory,
  clientHasLicenses,
  insertAgent,
  licenseAgentExists,
  lockAgent,
  lockLegacyAgent,
  moveAgent,
  registeredAgentsOfLicense,
  takeOverAgent,
} from './queries.ts';
import { AGENT_UNREGISTERED, clientOut } from './resolve.ts';

type Db = Kysely<Database>;

const agentLimitMessage = (max: number) => `Agent limit reached (${max})`;
const licenseBound = () =>
  new DomainError(
    'forbidden.agent_license_bound',
    'Agent is registered with a license key: the legacy key cannot act for it',
  );
const licensedClient = () =>
  new DomainError(
    'forbidden.legacy_licensed_client',
    "Client has license keys: the legacy key cannot register an agent under it; use one of the client's keys",
  );
const moveRefused = () =>
  new DomainError(
    'conflict.agent_move',
    'Agent has commands or group memberships under its current client: the legacy key cannot move it to another client_id (an admin can purge it first)',
  );
const unregistered = () => new DomainError('forbidden.agent_unregistered', AGENT_UNREGISTERED);
// Every step below runs under the row's lock, so this would take a change the locks do not cover.
const changedMeanwhile = () =>
  new DomainError('conflict.agent_changed', 'The agent changed while its heartbeat was recorded; send it again');
const TAKEN_OVER = 'Cancelled: a license key took this agent over from the legacy key before the command was reported';

/** A new agent: nothing queued for it yet. */
const NOTHING_CLAIMED: Claim = { commands: [], cancel: [] };

interface Outcome {
  claimed: Claim;
  event: AuditEvent | null;
}

/**
 * The heartbeat's slow path, when its one statement updated nothing. Everything happens in
 * one transaction under the agent row's lock, and the heartbeat statement runs again inside
 * it, so concurrent heartbeats of one agent (also legacy ones changing client_id) never need
 * a retry that could run out:
 * - a new agent is registered (no approval, no allowlist; `agent_first_seen`, no commands);
 * - a license key finding a legacy-registered agent under its client takes it over;
 * - a legacy agent whose daemon reports another client_id moves, if nothing would follow it;
 * - refusals throw (deregistered, agent limit, the legacy key and licensed clients).
 * See docs/decisions.md#the-legacy-key-its-own-agents-only-taken-over-by-license-keys.
 */
export async function heartbeatSlowPath(
  ctx: AppContext,
  principal: LicensePrincipal | LegacyPrincipal,
  hb: ReceivedHeartbeat,
  now: Date,
  statement: CompiledQuery,
): Promise<Claim> {
  const { claimed, event } = await ctx.db
    .transaction()
    .execute((trx) =>
      principal.kind === 'license'
        ? licenseSlowPath(trx, principal, hb, now, statement)
        : legacySlowPath(trx, principal, hb, now, statement),
    );
  if (event) ctx.events.publish(event);
  return claimed;
}

/** The heartbeat statement, inside the transaction that holds the agent's lock. */
async function recordUnderLock(trx: Db, statement: CompiledQuery): Promise<Claim> {
  const { rows } = await trx.executeQuery<ClaimedRow & { updated: number }>(statement);
  if (rows[0]?.updated !== 1) throw changedMeanwhile();
  return claimOf(rows);
}

/**
 * A license key registers under its own client within its agent limit (docs/api.md#licenses: registered
 * agents first seen with that key). Registrations of one key are serialised by a lock on
 * its license row, taken on this path only, so the limit holds exactly under concurrency.
 */
async function licenseSlowPath(
  trx: Db,
  principal: LicensePrincipal,
  hb: ReceivedHeartbeat,
  now: Date,
  statement: CompiledQuery,
): Promise<Outcome> {
  const { license, clientId } = principal;
  await lockLicense(trx, license.id);
  const withinLimit = async () => {
    if (license.max_agents !== null && (await registeredAgentsOfLicense(trx, license.id)) >= license.max_agents)
      throw new DomainError('forbidden.agent_limit', agentLimitMessage(license.max_agents));
  };
  const firstSeen = (extra: Record<string, unknown>) =>
    recordAuditEvent(trx, {
      event_type: 'agent_first_seen',
      actor: hb.agentId,
      client_id: clientId,
      data: {
        agent_id: hb.agentId,
        client_id: clientId,
        version: hb.version,
        license_id: license.id,
        tier: principal.tier,
        ...extra,
      },
    });
  // Twice at most: a concurrent first heartbeat (of any key) may insert the row between our look and our insert.
  for (let attempt = 0; attempt < 2; attempt++) {
    const existing = await lockAgent(trx, clientId, hb.agentId);
    if (existing) {
      if (existing.deregistered_at) throw unregistered();
      if (existing.license_id !== null) return { claimed: await recordUnderLock(trx, statement), event: null };
      // Registered by the legacy key: this key takes it over and the legacy key loses it.
      await withinLimit();
      const cancelled = await failAgentCommands(trx, clientId, hb.agentId, ['sent', 'acked'], TAKEN_OVER, now);
      await takeOverAgent(trx, clientId, hb.agentId, { id: license.id, tier: principal.tier });
      const claimed = await recordUnderLock(trx, statement);
      const event = await firstSeen({ taken_over_from: 'legacy-key', cancelled_command_ids: cancelled });
      return { claimed, event };
    }
    await withinLimit();
    if (await insertAgent(trx, newAgentRow(hb, clientId, license.id, principal.tier, now)))
      return { claimed: NOTHING_CLAIMED, event: await firstSeen({}) };
  }
  throw changedMeanwhile();
}

/**
 * The legacy key has no client: its agents are found by id among the agents it registered
 * (license_id null, one per id) and live under the client_id their daemon reports. It never
 * touches a license key's agent, never registers or moves an agent under a client that has
 * license keys (any key, active or not), and never moves an agent that has commands or
 * group memberships, so one client's history never lands in another's.
 */
async function legacySlowPath(
  trx: Db,
  principal: LegacyPrincipal,
  hb: ReceivedHeartbeat,
  now: Date,
  statement: CompiledQuery,
): Promise<Outcome> {
  const refuseLicensed = async (clientId: string) => {
    if (await licenseAgentExists(trx, clientId, hb.agentId)) throw licenseBound();
    if (await clientHasLicenses(trx, clientId)) throw licensedClient();
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    const legacy = await lockLegacyAgent(trx, hb.agentId);
    if (legacy) {
      if (legacy.deregistered_at) throw unregistered();
      if (hb.clientId !== null && legacy.client_id !== hb.clientId) {
        await refuseLicensed(hb.clientId);
        // The lock keeps commands and memberships from being added until the move commits (they share-lock the row).
        if (await agentHasHistory(trx, legacy.client_id, hb.agentId)) throw moveRefused();
        try {
          await moveAgent(trx, legacy.client_id, hb.clientId, hb.agentId);
        } catch (err) {
          // A license key registered the same id under that client meanwhile.
          if ((err as { code?: string }).code === '23505') throw licenseBound();
          throw err;
        }
      }
      return { claimed: await recordUnderLock(trx, statement), event: null };
    }
    const clientId = hb.clientId ?? NO_CLIENT;
    // Without a client_id, a twin of a license agent would make the admin's commands to that id ambiguous.
    if (hb.clientId === null) {
      if (await licenseAgentExists(trx, undefined, hb.agentId)) throw licenseBound();
    } else await refuseLicensed(clientId);
    if (await insertAgent(trx, newAgentRow(hb, clientId, null, principal.tier, now))) {
      const event = await recordAuditEvent(trx, {
        event_type: 'agent_first_seen',
        actor: hb.agentId,
        client_id: clientOut(clientId),
        data: {
          agent_id: hb.agentId,
          client_id: clientOut(clientId),
          version: hb.version,
          license_id: null,
          tier: principal.tier,
        },
      });
      return { claimed: NOTHING_CLAIMED, event };
    }
    // A concurrent first heartbeat inserted it (ours waited for it to commit): look again.
  }
  throw changedMeanwhile();
}

function newAgentRow(
  hb: ReceivedHeartbeat,
  clientId: string,
  licenseId: string | null,
  tier: LicensePrincipal['tier'],
  now: Date,
) {
  return {
    agent_id: hb.agentId,
    client_id: clientId,
    license_id: licenseId,
    key_tier: tier,
    ...storedState(hb),
    received_at: now,
    first_seen_at: now,
    deregistered_at: null,
  };
}

/** What a heartbeat stores on its agent's row (JSON as text), whichever statement writes it. */
export function storedState(hb: ReceivedHeartbeat) {
  return {
    version: hb.version,
    sent_at: hb.sentAt,
    status: hb.status,
    uptime_seconds: hb.uptimeSeconds,
    schedules: hb.schedules === null ? null : JSON.stringify(hb.schedules),
    system_info: hb.systemInfo === null ? null : JSON.stringify(hb.systemInfo),
  };
}
