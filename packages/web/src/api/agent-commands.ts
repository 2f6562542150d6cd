import type { Static } from '@sinclair/typebox';
import type {
  CancelCommandBody,
  CancelCommandResponse,
  CommandDetailResponse,
  CommandListResponse,
  CommandStatus,
  QueueCommandBody,
  QueueCommandResponse,
} from '@svc/protocol';
import { apiRequest } from './client.ts';

/** The command queue (docs/agent/commands.md): history, one command, queue, cancel. */

export type CommandDetail = Static<typeof CommandDetailResponse>;

/** GET /api/agent-commands: the newest commands, at most `limit`, in one status or any. */
export function listCommands(
  limit: number,
  status: CommandStatus | undefined,
): Promise<Static<typeof CommandListResponse>> {
  return apiRequest('GET', '/api/agent-commands', { query: { limit, status } });
}

/** GET /api/agent-commands?command_id=: one command with its result once it ended. */
export function getCommand(id: number): Promise<CommandDetail> {
  return apiRequest('GET', '/api/agent-commands', { query: { command_id: id } });
}

/** POST /api/agent-commands: to one agent, or to every member of a group. */
export function queueCommand(body: QueueCommandBody): Promise<QueueCommandResponse> {
  return apiRequest('POST', '/api/agent-commands', { body });
}

export function cancelCommand(body: CancelCommandBody): Promise<Static<typeof CancelCommandResponse>> {
  return apiRequest('POST', '/api/agent-commands/cancel', { body });
}
