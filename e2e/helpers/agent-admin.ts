import { expect } from 'vitest';
import { http, withToken } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';

/** The admin's side of the command channel, over real HTTP: queue commands, read their history. */

export interface CommandHistory {
  command: { id: number; status: string; command_type: string };
  result: { exit_code: number | null; stdout: string; stderr: string; session_id: string | null } | null;
}

export async function queueCommand(
  portal: TestPortal,
  agentId: string,
  commandType: string,
  payload: Record<string, unknown> = {},
): Promise<number> {
  const res = await http(portal.url, 'POST', '/api/agent-commands', {
    headers: withToken(await portal.adminToken()),
    json: { agent_id: agentId, command_type: commandType, payload, priority: 0 },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.commands[0].id as number;
}

export async function commandHistory(portal: TestPortal, id: number): Promise<CommandHistory> {
  const res = await http<CommandHistory>(portal.url, 'GET', `/api/agent-commands?command_id=${id}`, {
    headers: withToken(await portal.adminToken()),
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Polls the history until the command is completed or failed. */
export async function finishedCommand(portal: TestPortal, id: number, timeoutMs = 60_000): Promise<CommandHistory> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const h = await commandHistory(portal, id);
    if (h.command.status === 'completed' || h.command.status === 'failed') return h;
    if (Date.now() > until) throw new Error(`command ${id} still ${h.command.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
