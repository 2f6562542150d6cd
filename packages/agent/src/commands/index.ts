import { type DeliveredCommand, EXIT_CANCELLED, finishedCommandStatus } from '@svc/protocol';
import { deliverOutbox } from '../journal-delivery.ts';
import { Journal, journalFileOf, journalFilesIn } from '../journal.ts';
import type { CommandHost, CommandRunner, ReportBody } from '../types.ts';
import { executeCommand } from './dispatch.ts';
import { EXIT_INTERRUPTED, type Outcome } from './outcome.ts';
import { reportOutput, withoutHostPaths } from './output.ts';
import { progressReporter } from './progress-report.ts';
import { killTree, startTimeOf } from '@svc/client/kit';

/**
 * A command's report as the portal stores it and the tenant's users read it: escapes gone,
 * 10 KB per stream, and no path of this host (withoutHostPaths).
 */
export function statusReport(command: DeliveredCommand, outcome: Outcome, host: CommandHost): ReportBody {
  const shown = (text: string) => reportOutput(withoutHostPaths(text, host.sessionsRoot));
  return {
    command_id: command.id,
    agent_id: host.agentId,
    status: finishedCommandStatus(outcome.ok),
    exit_code: outcome.exitCode,
    stdout: shown(outcome.stdout),
    stderr: shown(outcome.stderr),
    ...(command.command_type === 'run_scan' || command.command_type === 'push_session'
      ? { session_id: outcome.sessionId ?? null }
      : {}),
  };
}

/**
 * The agent's command runner: delivered commands go into the journal's queue, then run one at a
 * time in received order, each recorded as started before it runs (so it never runs twice) and
 * each report written to the journal's outbox before it is sent (so none is lost).
 */
export function createCommandRunner(host: CommandHost): CommandRunner {
  const { log } = host;
  // One journal per portal origin and agent id, opened as the configured portal changes (reload).
  const journals = new Map<string, Journal>();
  const open = (name: string): Journal => {
    let j = journals.get(name);
    if (j === undefined) {
      j = Journal.open(host.stateDir, (m) => log.error(m), name);
      journals.set(name, j);
    }
    return j;
  };
  const journalNow = (): Journal => open(journalFileOf(host.portalOrigin, host.agentId));
  // Set by restart, update and shutdown: later commands wait in the journal for the next start.
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let sending: Promise<boolean> = Promise.resolve(true);
  /** The command running now and how to stop it (a cancellation from the portal). */
  let current: { id: number; stop: AbortController; reason: string | null } | null = null;
  /** Commands whose `acked` the portal refused for good (cancelled or expired before they started). */
  const refused = new Map<number, string>();

  /** One at a time for both: the journal's queue and outbox each have a single consumer. */
  const exclusive = (task: () => Promise<void>): Promise<void> => {
    const next = running.then(task);
    running = next.catch(() => undefined);
    return next;
  };
  /** Only the configured portal's outbox: another portal's reports wait until the agent is back there. */
  const flush = (journal: Journal = journalNow()): Promise<boolean> => {
    const next = sending.then(() =>
      deliverOutbox(journal, host.portal, log, (r, reason) => {
        if (r.status === 'acked' && r.progress === undefined) refused.set(r.command_id, reason);
      }),
    );
    sending = next.catch(() => false);
    return next;
  };

  const report = (command: DeliveredCommand, outcome: Outcome): ReportBody => statusReport(command, outcome, host);

  async function runOne(journal: Journal): Promise<void> {
    const command = journal.begin((c) => ({ command_id: c.id, agent_id: host.agentId, status: 'acked' }), new Date());
    log.info(`command ${command.id} ${command.command_type} started`);
    await flush(journal);
    const refusal = refused.get(command.id);
    if (refusal !== undefined) {
      // The portal cancelled or expired it before its start reached the portal: it is not run
      // (and stays started in the journal, so a later delivery of it is not run either).
      refused.delete(command.id);
      journal.abandon();
      log.warning(`command ${command.id} ${command.command_type} not run: the portal refused its start: ${refusal}`);
      return;
    }
    const started = Date.now();
    const progress = progressReporter(command.id, host);
    const stop = new AbortController();
    current = { id: command.id, stop, reason: null };
    let outcome: Outcome;
    try {
      outcome = await executeCommand(command, {
        host,
        // A scan of a network outlasts SVC_CMD_TIMEOUT by far: it has its own limit.
        deadline: started + (command.command_type === 'run_scan' ? host.scanTimeoutMs : host.commandTimeoutMs),
        onChild: (child) => journal.childStarted(child),
        onProgress: (p) => progress.offer(p),
        signal: stop.signal,
      });
    } catch (err) {
      outcome = { ok: false, exitCode: 1, stdout: '', stderr: `agent error: ${(err as Error).message}\n` };
    }
    const cancelReason = current.reason;
    current = null;
    // Stopped for the portal's cancellation: failed with EXIT_CANCELLED and the admin's reason.
    // A command that ended on its own before the stop took effect keeps its own outcome.
    if (stop.signal.aborted && outcome.exitCode === EXIT_CANCELLED)
      outcome = { ...outcome, ok: false, stderr: `${outcome.stderr}${cancelReason ?? 'Cancelled by the portal'}\n` };
    // No progress report after the final one: the one in flight ends first (it never fails the command).
    await progress.stop();
    journal.finish(report(command, outcome));
    log.info(`command ${command.id} ${command.command_type} ${outcome.ok ? 'completed' : 'failed'}`, {
      exit_code: outcome.exitCode,
      ms: Date.now() - started,
    });
    await flush(journal);
    if (outcome.after === undefined) return;
    if (outcome.after === 'reload') return host.reload();
    stopped = true;
    if (outcome.after === 'restart') host.restart();
    else host.shutdown(outcome.after === 'shutdown');
  }

  async function drain(journal: Journal): Promise<void> {
    // Between commands only: a stop never cuts the running one, and the rest waits in the journal.
    while (!stopped && !host.stopping() && journal.queue.length > 0) await runOne(journal);
  }

  return {
    run: (commands) => {
      // Queued in the journal at once, even while an earlier batch runs: a stop before their
      // turn leaves them there for the next start.
      const journal = journalNow();
      const fresh: DeliveredCommand[] = [];
      for (const c of commands) {
        if (journal.isQueued(c.id) || fresh.some((f) => f.id === c.id))
          log.info(`command ${c.id} was delivered again while it waits its turn; it runs once`);
        else if (journal.hasStarted(c.id)) redelivered(journal, c);
        else fresh.push(c);
      }
      journal.enqueue(fresh);
      return exclusive(() => drain(journal));
    },

    cancel: (cancels) => {
      for (const c of cancels) {
        if (current === null || current.id !== c.id) {
          log.debug(`cancellation of command ${c.id} ignored: it is not running here`);
          continue;
        }
        if (current.stop.signal.aborted) continue;
        log.warning(`command ${c.id} cancelled by the portal: stopping it`, { reason: c.reason });
        current.reason = c.reason;
        current.stop.abort();
      }
    },

    recover: () =>
      exclusive(async () => {
        // Every journal of the state directory: a command cut short while the agent had another
        // portal is reported failed there (its report waits in that journal's outbox).
        recoverCut(journalNow());
        for (const name of journalFilesIn(host.stateDir)) recoverCut(open(name));
        await flush();
        await drain(journalNow());
      }),

    flush: async () => {
      await flush();
    },
  };

  /**
   * A command this agent started, delivered again: the portal never got its `acked` (the
   * report was lost). It is not run twice; its start is reported again when no report of it
   * waits in the outbox and it is still running (a finished one's final report is on its way
   * or was refused, and the portal ends it by expiry).
   */
  function redelivered(journal: Journal, c: DeliveredCommand): void {
    const reportAgain = current?.id === c.id && !journal.hasReport(c.id);
    log.warning(
      `command ${c.id} was delivered again; it runs only once${reportAgain ? ': its start is reported again' : ''}`,
    );
    if (reportAgain) {
      journal.report({ command_id: c.id, agent_id: host.agentId, status: 'acked' });
      void flush(journal);
    }
  }

  function recoverCut(journal: Journal): void {
    const cut = journal.current;
    if (cut !== null) {
      // A child that outlived the agent (its own process group survives a kill -9) is stopped
      // first; the start time tells it from a process that reuses its pid.
      if (cut.child !== null && startTimeOf(cut.child.pid) === cut.child.startTime) killTree(cut.child.pid);
      log.warning(`command ${cut.command.id} ${cut.command.command_type} was interrupted; reporting it failed`);
      journal.finish(
        report(cut.command, {
          ok: false,
          exitCode: EXIT_INTERRUPTED,
          stdout: '',
          stderr:
            `interrupted: the agent stopped while ${cut.command.command_type} ran (started ${cut.startedAt}); ` +
            'it is not run again\n',
        }),
      );
    }
  }
}
