import type { AGENT_ACTIONS, AgentListResponse, AgentsQuery, OkBody } from '@svc/protocol';
import { apiRequest } from './client.ts';

/** The fleet's agents: GET /api/health's agent listing and PATCH /api/agents (docs/api.md#agents-and-commands). */

export type AgentAction = (typeof AGENT_ACTIONS)[number];

/** One page of agents matching `query` (the listing is always asked for: `agents=true`). */
export function listAgents(query: Omit<AgentsQuery, 'agents'>): Promise<AgentListResponse> {
  return apiRequest('GET', '/api/health', { query: { agents: 'true', ...query } });
}

/** Deregister, re-enable or purge an agent; `clientId` null names an agent without a client. */
export function changeAgent(agentId: string, clientId: string | null, action: AgentAction): Promise<OkBody> {
  return apiRequest('PATCH', '/api/agents', {
    body: { agent_id: agentId, ...(clientId === null ? {} : { client_id: clientId }), action },
  });
}
