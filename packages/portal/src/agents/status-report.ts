import {
  expiredMessage,
  isValidSessionId,
  MAX_OUTPUT_BYTES,
  mayReportCommandStatus,
  mayReportProgress,
  readCommandProgress,
  SESSION_ID_PATTERN,
  type StatusReportBody,
} from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import {
  insertCommandResult,
  lockAgentCommand,
  markCommandAcked,
  markCommandFinished,
  recordCommandProgress,
  sessionOfClient,
} from './queries.ts';
import { failCommands } from './lifecycle-queries.ts';
import { agentForKey, clientOut } from './resolve.ts';

/**
 * ANSI escapes: OSC strings (ESC ] ... BEL or ESC \\, e.g. terminal titles and hyperlinks),
 * CSI sequences with any parameter bytes 0x30-0x3F (`ESC [ > 4 ; 2 m`, `ESC [ 38:5:1 m`),
 * escapes with intermediate bytes (`ESC ( B`) and the other two-byte escapes. NUL goes too: PostgreSQL text cannot hold it.
 */
const ANSI =
  /\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b\[[0-?]*[ -/]*[@-~]|\u001b[ -/]+[0-~]|\u001b[@-_]|\u0000/g;
/** A result's session_id is set for these and null for every other command. */
const SESSION_COMMANDS: readonly string[] = ['run_scan', 'push_session'];
const FOREIGN_SESSION = "session_id does not name a session of this agent's client";
const commandNotFound = () => new DomainError('not_found.command', 'Command not found for this agent');

/** Strip ANSI escapes and keep at most 10 KB (UTF-8 bytes, never splitting a character). */
export function capOutput(text: string | null | undefined): string {
  const clean = (text ?? '').replace(ANSI, '');
  const bytes = Buffer.from(clean, 'utf8');
  if (bytes.length <= MAX_OUTPUT_BYTES) return clean;
  // Cut at a character boundary: back off while the first byte left out is a continuation byte.
  let end = MAX_OUTPUT_BYTES;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * PATCH /api/agent-commands: the agent reports `acked`, `completed` or `failed` for one of
 * its own commands. Completion or failure stores the result and audits/emits
 * `command_completed` / `command_failed` with the agent id as actor. `acked` with a `progress`
 * is a progress report on a command acked already: the progress and its time are stored,
 * nothing else (no transition, no audit event, no webhook).
 */
export async function reportCommandStatus(
  ctx: AppContext,
  principal: LicensePrincipal | LegacyPrincipal,
  body: StatusReportBody,
) {
  const agent = await agentForKey(ctx.db, principal, body.agent_id);
  if (body.session_id != null && !isValidSessionId(body.session_id))
    throw new DomainError('invalid.session_id', `session_id must match ${SESSION_ID_PATTERN}`);
  // Ids are bigserial: one past 2^53 (or past bigint) cannot exist, and must not reach SQL as an out-of-range literal.
  if (!Number.isSafeInteger(body.command_id)) throw commandNotFound();
  const progress = progressOf(body);
  const now = ctx.now();
  let refusal: DomainError | null = null;
  const event = await ctx.db.transaction().execute(async (trx) => {
    // Again, locked: a takeover of a legacy agent cannot slip between this check and the report.
    await agentForKey(trx, principal, body.agent_id, { lock: true });
    const cmd = await lockAgentCommand(trx, String(body.command_id), agent.client_id, agent.agent_id);
    if (!cmd) throw commandNotFound();
    if (progress !== null) {
      if (!mayReportProgress(cmd.status))
        throw new DomainError(
          'conflict.status_transition',
          `Progress can be reported only for an acked command; this one is ${cmd.status}`,
        );
      await recordCommandProgress(trx, cmd.id, progress, now);
      return null;
    }
    // The agent's moves, strictly (command-status.ts in the protocol); anything else is a 409.
    if (!mayReportCommandStatus(cmd.status, body.status))
      throw new DomainError('conflict.status_transition', `Illegal status transition: ${cmd.status} -> ${body.status}`);
    if (body.status === 'acked') {
      // Expired before the agent started it (the sweep had not come yet): failed now, and the
      // agent, answered 409, skips it. Committed before the refusal is thrown.
      if (cmd.expires_at <= now) {
        const message = expiredMessage(cmd.expires_at, 'sent');
        await failCommands(trx, [{ id: cmd.id, message }], now);
        refusal = new DomainError('conflict.status_transition', `${message}: not to be run`);
        return recordAuditEvent(trx, {
          event_type: 'command_failed',
          actor: 'system',
          client_id: clientOut(agent.client_id),
          data: {
            command_id: body.command_id,
            agent_id: body.agent_id,
            command_type: cmd.command_type,
            exit_code: null,
            session_id: null,
            completed_at: now.toISOString(),
            reason: 'expired',
            expires_at: cmd.expires_at.toISOString(),
          },
        });
      }
      await markCommandAcked(trx, cmd.id, now);
      return null;
    }
    await markCommandFinished(trx, cmd.id, body.status, now);
    const sessionId = SESSION_COMMANDS.includes(cmd.command_type) ? (body.session_id ?? null) : null;
    // A result links only to a session of the agent's own client; a missing one and another
    // client's are refused alike.
    if (sessionId !== null && !(await sessionOfClient(trx, sessionId, agent.client_id)))
      throw new DomainError('invalid.foreign_session', FOREIGN_SESSION);
    await insertCommandResult(trx, {
      command_id: cmd.id,
      exit_code: body.exit_code ?? null,
      stdout: capOutput(body.stdout),
      stderr: capOutput(body.stderr),
      session_id: sessionId,
      completed_at: now,
    });
    return recordAuditEvent(trx, {
      event_type: body.status === 'completed' ? 'command_completed' : 'command_failed',
      actor: body.agent_id,
      session_id: sessionId,
      client_id: clientOut(agent.client_id),
      data: {
        command_id: body.command_id,
        agent_id: body.agent_id,
        command_type: cmd.command_type,
        exit_code: body.exit_code ?? null,
        session_id: sessionId,
        completed_at: now.toISOString(),
        // The agent stopped a command an admin cancelled (docs/agent/commands.md, "Cancel, expiry and redelivery").
        ...(body.status === 'failed' && cmd.cancel_requested_by !== null
          ? { reason: 'cancelled', cancelled_by: cmd.cancel_requested_by, cancel_reason: cmd.cancel_reason }
          : {}),
      },
    });
  });
  if (event) ctx.events.publish(event);
  if (refusal) throw refusal;
}

/** The report's progress, checked by the protocol's rule (400 naming the field); only with status `acked`. */
function progressOf(body: StatusReportBody) {
  if (body.progress === undefined) return null;
  if (body.status !== 'acked')
    throw new DomainError('invalid.progress', `progress is reported with status acked, not ${body.status}`);
  const read = readCommandProgress(body.progress);
  if (!read.ok) throw new DomainError('invalid.progress', read.message);
  return read.progress;
}
