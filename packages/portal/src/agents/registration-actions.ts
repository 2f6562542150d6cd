import { AGENT_DEREGISTERED_MESSAGE, AGENT_DEREGISTERED_RUNNING_MESSAGE, type AuditEventType } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { failAgentCommands } from './lifecycle-queries.ts';
import { deleteAgent, deregisterAgent, lockAgent, reenableAgent } from './queries.ts';
import { agentForUser, agentNotFound, clientOut } from './resolve.ts';

type AgentAction = 'deregister' | 'reenable' | 'purge';

const EVENTS: Record<AgentAction, { type: AuditEventType; by: string }> = {
  deregister: { type: 'agent_deregistered', by: 'deregistered_by' },
  reenable: { type: 'agent_reregistered', by: 'reregistered_by' },
  purge: { type: 'agent_purged', by: 'purged_by' },
};

/**
 * the registration states: registered → deregistered (sets deregistered_at, drops group
 * memberships) → registered again (reenable) or removed (purge: the agent row with its
 * commands, results and memberships by cascade; audit history stays). An action that
 * finds the agent already in that state, or a purge of a registered agent, is a 409.
 * The agent is (client_id, agent_id): an id under several clients needs `client_id` (docs/api.md#ids-are-per-client).
 * A deregistration fails the agent's open commands: those not started (pending, sent) with
 * "Agent deregistered", so a re-enable never runs them, and running ones (acked), whose reports
 * a deregistered agent can no longer send; its one audit event lists their ids
 * (`dropped_command_ids`) rather than one `command_failed` per command.
 */
export async function changeRegistration(
  ctx: AppContext,
  user: UserPrincipal,
  agentId: string,
  clientId: string | null | undefined,
  action: AgentAction,
  actor: string,
): Promise<void> {
  const now = ctx.now();
  const key = await agentForUser(ctx.db, user, agentId, clientId);
  const event = await ctx.db.transaction().execute(async (trx) => {
    const agent = await lockAgent(trx, key.client_id, agentId);
    if (!agent) throw agentNotFound();
    const deregistered = agent.deregistered_at !== null;
    let extra: Record<string, unknown> = {};
    if (action === 'deregister') {
      if (deregistered) throw new DomainError('conflict.agent_state', 'Agent is already deregistered');
      await deregisterAgent(trx, agent.client_id, agentId, now);
      const notStarted = await failAgentCommands(
        trx,
        agent.client_id,
        agentId,
        ['pending', 'sent'],
        AGENT_DEREGISTERED_MESSAGE,
        now,
      );
      const running = await failAgentCommands(
        trx,
        agent.client_id,
        agentId,
        ['acked'],
        AGENT_DEREGISTERED_RUNNING_MESSAGE,
        now,
      );
      extra = { dropped_command_ids: [...notStarted, ...running].sort((a, b) => a - b) };
    } else if (action === 'reenable') {
      if (!deregistered) throw new DomainError('conflict.agent_state', 'Agent is already registered');
      await reenableAgent(trx, agent.client_id, agentId);
    } else {
      if (!deregistered) throw new DomainError('conflict.agent_state', 'Only a deregistered agent can be purged');
      await deleteAgent(trx, agent.client_id, agentId);
    }
    const { type, by } = EVENTS[action];
    return recordAuditEvent(trx, {
      event_type: type,
      actor,
      client_id: clientOut(agent.client_id),
      data: { agent_id: agentId, [by]: actor, ...extra },
    });
  });
  ctx.events.publish(event);
}
