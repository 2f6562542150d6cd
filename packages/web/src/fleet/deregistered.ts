import type { AuditEvent } from '@svc/protocol';

/**
 * The fleet listing holds registered agents only, so the agents waiting for re-enable or
 * purge are read from the audit log: an agent whose latest registration event is
 * `agent_deregistered` is still deregistered (re-enable and purge log their own events).
 */

export interface DeregisteredAgent {
  agent_id: string;
  client_id: string | null;
  deregistered_at: string;
  deregistered_by: string;
}

const REGISTRATION_EVENTS = new Set(['agent_deregistered', 'agent_reregistered', 'agent_purged', 'agent_first_seen']);

/** `events` newest first, as GET /api/audit answers. */
export function deregisteredAgents(events: readonly AuditEvent[]): DeregisteredAgent[] {
  const decided = new Set<string>();
  const out: DeregisteredAgent[] = [];
  for (const e of events) {
    if (!REGISTRATION_EVENTS.has(e.event_type)) continue;
    const agentId = e.data['agent_id'];
    if (typeof agentId !== 'string') continue;
    const key = JSON.stringify([e.client_id, agentId]);
    if (decided.has(key)) continue;
    decided.add(key);
    if (e.event_type === 'agent_deregistered')
      out.push({ agent_id: agentId, client_id: e.client_id, deregistered_at: e.created_at, deregistered_by: e.actor });
  }
  return out;
}
