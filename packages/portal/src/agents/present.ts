import type { Selectable } from 'kysely';
import {
  cancelMessage,
  STALE_THRESHOLD_SECONDS,
  sessionHref,
  type AgentView,
  type CommandCancel,
  type CommandRecord,
  type CommandProgressView,
  type CommandType,
  isProgressStage,
  type DeliveredCommand,
  type GroupMemberAdded,
  type HeartbeatResponse,
  type QueueCommandResponse,
} from '@svc/protocol';
import type { AgentCommandResultsTable, AgentsTable } from '../db/schema.ts';
import type { CancelRow, Claim, ClaimedRow } from './claim-sql.ts';
import type { RunningRow } from './fleet-queries.ts';
import type { CommandRow } from './history-queries.ts';
import { clientOut } from './resolve.ts';

/** The agents area's answers: stored rows in the shapes of the protocol package. */

export function presentAgent(row: Selectable<AgentsTable>, now: Date, running: readonly RunningRow[]): AgentView {
  const age = Math.max(0, Math.floor((now.getTime() - row.received_at.getTime()) / 1000));
  return {
    agent_id: row.agent_id,
    version: row.version,
    timestamp: row.sent_at.toISOString(),
    status: row.status,
    uptime_seconds: row.uptime_seconds,
    client_id: clientOut(row.client_id),
    schedules: row.schedules,
    system_info: row.system_info,
    received_at: row.received_at.toISOString(),
    first_seen_at: row.first_seen_at.toISOString(),
    deregistered_at: row.deregistered_at?.toISOString() ?? null,
    is_stale: age > STALE_THRESHOLD_SECONDS,
    age_seconds: age,
    ...hostOf(row.system_info),
    running: running.map((c) => ({
      id: Number(c.id),
      command_type: c.command_type as CommandType,
      acked_at: c.acked_at.toISOString(),
      progress: progressOf(c),
    })),
  };
}

/** Host name and addresses from the stored telemetry, which is kept as the daemon sent it: read defensively. */
function hostOf(info: Record<string, unknown> | null): Pick<AgentView, 'hostname' | 'ip_addresses'> {
  const hostname = info?.['hostname'];
  const ips = info?.['ip_addresses'];
  return {
    hostname: typeof hostname === 'string' && hostname.trim() !== '' ? hostname : null,
    ip_addresses: Array.isArray(ips) ? ips.filter((ip): ip is string => typeof ip === 'string').slice(0, 16) : [],
  };
}

/** A command handed to its agent (heartbeat answer). */
export function presentDelivered(row: ClaimedRow): DeliveredCommand {
  return {
    id: Number(row.id),
    command_type: row.command_type as CommandType,
    payload: row.payload,
    priority: row.priority,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
  };
}

/** A heartbeat's claim as the answer's `commands` and `cancel`. */
export function presentClaim(claim: Claim): { commands: DeliveredCommand[]; cancel: CommandCancel[] } {
  return { commands: claim.commands.map(presentDelivered), cancel: presentCancels(claim.cancel) };
}

/** The running commands to stop, each with the reason its result will keep. */
export function presentCancels(rows: readonly CancelRow[]): CommandCancel[] {
  return rows.map((c) => ({ id: Number(c.id), reason: cancelMessage(c.by, c.reason) }));
}

/** `cancel` only when the agent has a command to stop: an answer without it is the contract's answer as it was. */
export function cancelField(cancel: readonly CommandCancel[]): { cancel?: CommandCancel[] } {
  return cancel.length === 0 ? {} : { cancel: [...cancel] };
}

/** A command handed to its agent by the poll, which also says which group it came through. */
export function presentPolled(row: ClaimedRow): DeliveredCommand & { group_target: string | null } {
  return { ...presentDelivered(row), group_target: row.group_target };
}

export interface Queued {
  id: string;
  agent_id: string;
  created_at: Date;
  expires_at: Date;
}

/** POST /api/agent-commands' answer. A broadcast's commands share one created_at: formatted once. */
export function presentQueued(
  type: CommandType,
  queued: Queued[],
  skipped: { agent_id: string; reason: string }[],
): QueueCommandResponse {
  const isoOf = memoLast((d: Date) => d.toISOString());
  const expiresOf = memoLast((d: Date) => d.toISOString());
  return {
    success: true,
    commands: queued.map((q) => ({
      id: Number(q.id),
      agent_id: q.agent_id,
      command_type: type,
      status: 'pending',
      created_at: isoOf(q.created_at),
      expires_at: expiresOf(q.expires_at),
    })),
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}

function memoLast<T, R>(fn: (value: T) => R): (value: T) => R {
  let last: { value: T; result: R } | undefined;
  return (value) => {
    if (last === undefined || last.value !== value) last = { value, result: fn(value) };
    return last.result;
  };
}

export function presentCommand(row: CommandRow): CommandRecord {
  return {
    id: Number(row.id),
    agent_id: row.agent_id,
    agent_hostname: hostOf(row.agent_system_info).hostname,
    client_id: clientOut(row.client_id),
    command_type: row.command_type as CommandType,
    payload: row.payload,
    priority: row.priority,
    created_by: row.created_by,
    group_target: row.group_target,
    status: row.status,
    created_at: row.created_at.toISOString(),
    sent_at: row.sent_at?.toISOString() ?? null,
    acked_at: row.acked_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
    progress: progressOf(row),
    expires_at: row.expires_at.toISOString(),
    cancel_requested:
      row.cancel_requested_at === null || row.cancel_requested_by === null
        ? null
        : { at: row.cancel_requested_at.toISOString(), by: row.cancel_requested_by, reason: row.cancel_reason },
  };
}

/** A command's latest progress: its three columns are set together or all null. */
function progressOf(
  row: Pick<CommandRow, 'progress_task' | 'progress_percent' | 'progress_at' | 'progress_stage'>,
): CommandProgressView | null {
  if (row.progress_task === null || row.progress_percent === null || row.progress_at === null) return null;
  const stage = isProgressStage(row.progress_stage) ? { stage: row.progress_stage } : {};
  return {
    task: row.progress_task,
    percent: row.progress_percent,
    ...stage,
    reported_at: row.progress_at.toISOString(),
  };
}

/** `clientId`: the command's client (external form), which a result's session always belongs to. */
export function presentResult(row: Selectable<AgentCommandResultsTable>, clientId: string | null) {
  return {
    exit_code: row.exit_code,
    stdout: row.stdout,
    stderr: row.stderr,
    session_id: row.session_id,
    session_url: row.session_id === null ? null : sessionHref(row.session_id, clientId),
    completed_at: row.completed_at.toISOString(),
  };
}

export function presentHeartbeatAnswer(
  receivedAt: Date,
  commands: DeliveredCommand[],
  cancel: readonly CommandCancel[] = [],
): HeartbeatResponse {
  return { success: true, received_at: receivedAt.toISOString(), commands, ...cancelField(cancel) };
}

export function presentAdded(
  group: string,
  agentId: string,
  added: { clientId: string | null; createdAt: Date },
): GroupMemberAdded {
  return {
    success: true,
    group_name: group,
    agent_id: agentId,
    client_id: added.clientId,
    created_at: added.createdAt.toISOString(),
  };
}

/** One member of a group, as GET /api/agent-groups lists it. */
export function presentMember(row: { agent_id: string; client_id: string; created_at: Date }) {
  return { agent_id: row.agent_id, client_id: clientOut(row.client_id), created_at: row.created_at.toISOString() };
}
