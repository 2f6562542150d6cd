import {
  checkCommandPayload,
  type CommandPayloads,
  type CommandType,
  type DeliveredCommand,
  SCAN_BUDGET_SETTING,
  scanBudgetOf,
} from '@svc/protocol';
import { type CommandContext, done, EXIT_REFUSED, failure, type Outcome } from './outcome.ts';
import { pushSession, runScan } from './scan-commands.ts';
import { selfUpdate } from './self-update.ts';
import { pushConfig, setLogLevel, updateSchedule } from './settings-commands.ts';

/**
 * One command, by type. The payload is checked again with the protocol's rules (the portal
 * checked it at queue time; the agent trusts nothing it did not check itself). No type runs
 * shell text: children get argv arrays built from checked values.
 */

type Handlers = {
  [T in CommandType]: (payload: CommandPayloads[T], ctx: CommandContext) => Outcome | Promise<Outcome>;
};

const HANDLERS: Handlers = {
  run_scan: runScan,
  push_session: pushSession,
  update_schedule: (p, ctx) => updateSchedule(p, ctx.host),
  push_config: (p, ctx) => pushConfig(p, ctx.host),
  set_log_level: (p, ctx) => setLogLevel(p, ctx.host),
  restart: () => done('restarting in place\n', { after: 'restart' }),
  shutdown: (p) =>
    p.graceful === false
      ? done('shutting down now\n', { after: 'shutdown-now' })
      : done('shutting down gracefully\n', { after: 'shutdown' }),
  update: selfUpdate,
};

export async function executeCommand(command: DeliveredCommand, ctx: CommandContext): Promise<Outcome> {
  const type = command.command_type;
  // The agent's own SVC_SCAN_MAX_ADDRESSES (its settings, as its `svc scan` children see them).
  const budget = scanBudgetOf(ctx.host.childEnv[SCAN_BUDGET_SETTING]);
  if (!budget.ok) return failure(budget.message, EXIT_REFUSED);
  const checked = checkCommandPayload(type, command.payload ?? {}, { scanBudget: budget.budget });
  if (!checked.ok) return failure(checked.message, EXIT_REFUSED);
  const handler = HANDLERS[type] as (payload: unknown, ctx: CommandContext) => Outcome | Promise<Outcome>;
  return handler(checked.payload, ctx);
}
