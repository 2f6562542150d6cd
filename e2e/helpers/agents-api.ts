import type { Static } from '@sinclair/typebox';
import type { AgentView, CommandDetailResponse } from '@svc/protocol';
import { http, withToken } from '@svc/test-support/http';
import { untilValue } from '@svc/test-support/wait';
import type { TestPortal } from '@svc/test-support/portal';

/** The admin side of the agent API, as tests of real agents use it. */
export function agentsApi(portal: TestPortal, admin: () => string) {
  const get = (path: string) => http(portal.url, 'GET', path, { headers: withToken(admin()) });
  /** The stored agent view (GET /api/health?agents=true), or undefined before its first heartbeat. */
  const view = async (agentId: string): Promise<AgentView | undefined> => {
    const res = await get('/api/health?agents=true');
    if (res.status !== 200) throw new Error(`agents: ${res.status} ${res.text}`);
    return (res.body.agents as AgentView[]).find((a) => a.agent_id === agentId);
  };
  return {
    view,
    /**
     * Resolves once the portal has stored `n` heartbeats of the agent after the call (each moves
     * `received_at`): a window for "X never happens" measured in the agent's own beats, not in time.
     */
    async laterHeartbeats(agentId: string, n: number, timeoutMs = 60_000): Promise<void> {
      const seen = new Set([(await view(agentId))?.received_at]);
      await untilValue(
        async () => {
          seen.add((await view(agentId))?.received_at);
          return seen.size > n ? true : undefined;
        },
        `${n} more heartbeats of ${agentId}`,
        timeoutMs,
      );
    },
    /** Queues one command (or a group broadcast); returns the created command ids. */
    async queue(
      target: { agent_id: string } | { group_target: string },
      command_type: string,
      payload: Record<string, unknown> = {},
    ): Promise<number[]> {
      const res = await http(portal.url, 'POST', '/api/agent-commands', {
        headers: withToken(admin()),
        json: { ...target, command_type, payload },
      });
      if (res.status !== 201) throw new Error(`queue: ${res.status} ${res.text}`);
      return (res.body.commands as { id: number }[]).map((c) => c.id);
    },
    /** The command and its result (admin history detail). */
    async detail(id: number): Promise<Static<typeof CommandDetailResponse>> {
      const res = await get(`/api/agent-commands?command_id=${id}`);
      if (res.status !== 200) throw new Error(`detail: ${res.status} ${res.text}`);
      return res.body;
    },
    async patchAgent(agent_id: string, action: 'deregister' | 'reenable' | 'purge'): Promise<number> {
      const res = await http(portal.url, 'PATCH', '/api/agents', {
        headers: withToken(admin()),
        json: { agent_id, action },
      });
      return res.status;
    },
  };
}
