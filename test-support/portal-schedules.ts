import { http, type HttpResult, withToken } from './http.ts';

/**
 * /api/agent-schedules for tests (portal tests and e2e with real svcd): the admin's calls,
 * with the answer as the portal gave it. `base` is the portal's URL, `token` an admin's.
 */
export function schedulesApi(base: string, token: () => string) {
  const headers = () => withToken(token());
  return {
    create: (body: Record<string, unknown>): Promise<HttpResult> =>
      http(base, 'POST', '/api/agent-schedules', { headers: headers(), json: body }),
    list: (clientId?: string): Promise<HttpResult> =>
      http(
        base,
        'GET',
        `/api/agent-schedules${clientId === undefined ? '' : `?client_id=${encodeURIComponent(clientId)}`}`,
        { headers: headers() },
      ),
    get: (id: string): Promise<HttpResult> =>
      http(base, 'GET', `/api/agent-schedules?id=${encodeURIComponent(id)}`, { headers: headers() }),
    update: (id: string, body: Record<string, unknown>): Promise<HttpResult> =>
      http(base, 'PATCH', `/api/agent-schedules?id=${encodeURIComponent(id)}`, { headers: headers(), json: body }),
    remove: (id: string): Promise<HttpResult> =>
      http(base, 'DELETE', `/api/agent-schedules?id=${encodeURIComponent(id)}`, { headers: headers() }),
    /** Adds an agent to its client's group (msp keys' agents). */
    join: (agentId: string, group: string): Promise<HttpResult> =>
      http(base, 'POST', '/api/agent-groups', { headers: headers(), json: { agent_id: agentId, group_name: group } }),
  };
}

/** A cron that fires every `seconds` seconds (6 fields, seconds first), as svcd reads it. */
export const everySeconds = (seconds: number): string => `*/${seconds} * * * * *`;
