import { type CommandProgress, sameProgress } from '@svc/protocol';
import type { CommandHost } from '../types.ts';

/**
 * A running command's progress reports (docs/agent.md, "Progress"): `status: acked` with the
 * `progress` the portal stores for an acked command. At most one every PROGRESS_REPORT_INTERVAL_MS
 * (the first at once), the newest progress when the interval is over, and none when nothing
 * changed since the last one sent. A report that fails is logged and forgotten: progress is
 * a courtesy to the console, never part of the command's outcome, and never journaled (the
 * final completed/failed report is, as before).
 */

export const PROGRESS_REPORT_INTERVAL_MS = 15_000;

export interface ProgressReporter {
  /** The command's newest progress (svc scan's `--progress-json` lines). */
  offer(progress: CommandProgress): void;
  /** No report after this; resolves when the one in flight, if any, has ended. */
  stop(): Promise<void>;
}

export function progressReporter(
  commandId: number,
  host: Pick<CommandHost, 'agentId' | 'portal' | 'log'>,
  intervalMs = PROGRESS_REPORT_INTERVAL_MS,
): ProgressReporter {
  let latest: CommandProgress | null = null;
  let sent: CommandProgress | null = null;
  let sentAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let stopped = false;

  const send = (): void => {
    timer = undefined;
    if (stopped || latest === null || sameProgress(latest, sent)) return;
    const progress = latest;
    sent = progress;
    sentAt = Date.now();
    // One at a time and in order: a slow portal never sees an older progress after a newer one.
    inFlight = inFlight.then(async () => {
      try {
        await host.portal.reportCommandStatus({
          command_id: commandId,
          agent_id: host.agentId,
          status: 'acked',
          progress,
        });
        host.log.debug(`progress report sent: command ${commandId} ${progress.task} ${progress.percent}%`);
      } catch (err) {
        host.log.warning(
          `progress report for command ${commandId} not taken (the command goes on): ${(err as Error).message}`,
        );
      }
    });
  };

  return {
    offer(progress) {
      if (stopped) return;
      latest = progress;
      if (timer !== undefined || sameProgress(latest, sent)) return;
      const wait = sentAt + intervalMs - Date.now();
      if (wait <= 0) send();
      else timer = setTimeout(send, wait);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await inFlight;
    },
  };
}
