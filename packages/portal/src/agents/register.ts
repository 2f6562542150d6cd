import { recordAuditEvent } from '../audit/record.ts';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { forbidden } from '../errors.ts';
import type { HeartbeatInput } from './heartbeat-input.ts';

export const agentLimitMessage = (max: number) => `Agent limit reached (${max})`;

/**
 * First heartbeat of an unknown agent: register it (no approval, no allowlist) under the
 * key's client, within the key's agent limit (D11: registered agents first seen with that
 * key), and audit `agent_first_seen`. Returns false when a concurrent first heartbeat
 * registered it first.
 */
export async function registerAgent(ctx: AppContext, principal: LicensePrincipal | LegacyPrincipal, hb: HeartbeatInput, now: Date): Promise<boolean> {
  const license = principal.kind === 'license' ? principal.license : null;
  const clientId = principal.kind === 'license' ? principal.clientId : hb.clientId;
  const event = await ctx.db.transaction().execute(async (trx) => {
    if (license !== null) {
      // Serialise registrations of one key so the limit holds under concurrency.
      await trx.selectFrom('licenses').select('id').where('id', '=', license.id).forUpdate().executeTakeFirst();
      if (license.max_agents !== null) {
        const { n } = await trx
          .selectFrom('agents')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('license_id', '=', license.id)
          .where('deregistered_at', 'is', null)
          .executeTakeFirstOrThrow();
        if (Number(n) >= license.max_agents) throw forbidden(agentLimitMessage(license.max_agents));
      }
    }
    const inserted = await trx
      .insertInto('agents')
      .values({
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
      })
      .onConflict((oc) => oc.column('agent_id').doNothing())
      .returning('agent_id')
      .executeTakeFirst();
    if (!inserted) return null;
    return recordAuditEvent(trx, {
      event_type: 'agent_first_seen',
      actor: hb.agentId,
      client_id: clientId,
      data: { agent_id: hb.agentId, client_id: clientId, version: hb.version, license_id: license?.id ?? null, tier: principal.tier },
    });
  });
  if (event === null) return false;
  ctx.events.publish(event);
  return true;
}
