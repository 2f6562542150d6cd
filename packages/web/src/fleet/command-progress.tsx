import type { CommandProgressView, RunningCommand } from '@svc/protocol';
import { formatPercent, NO_VALUE } from '../ui/format.ts';

/**
 * A running command's progress as its agent last reported it (run_scan: nmap's task and
 * percent; docs/api.md#agents-and-commands, "Progress reports"): a native <progress> bar named
 * by the text beside it, and when that report came. The command view reloads while the command
 * can change, so the bar follows the agent's reports (at most one every 15 s).
 */

/** `14:03:25 UTC`: the report's time of day, to the second (reports come every 15 s). */
export function progressTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? NO_VALUE : `${d.toISOString().slice(11, 19)} UTC`;
}

export function CommandProgressBar({
  id,
  progress,
  labelPrefix = 'cmd-progress',
}: {
  id: number;
  progress: CommandProgressView;
  labelPrefix?: string;
}) {
  const label = `${labelPrefix}-${id}`;
  // Only nmap measures its own progress; another stage of the pipeline is shown as under way (no value).
  const measured = progress.stage === undefined || progress.stage === 'nmap';
  return (
    <div class="adm-progress" data-field="progress">
      {measured ? (
        <progress max={100} value={progress.percent} aria-labelledby={label} />
      ) : (
        <progress max={100} aria-labelledby={label} />
      )}
      <span id={label}>{measured ? `${progress.task}: ${formatPercent(progress.percent)}` : progress.task}</span>
      <span class="adm-hint">as of {progressTime(progress.reported_at)}</span>
    </div>
  );
}

/** What an agent runs now, in the fleet listing: each acked command, with its progress once reported. */
export function RunningCommands({ commands }: { commands: readonly RunningCommand[] }) {
  if (commands.length === 0) return null;
  return (
    <ul class="fleet-running" aria-label="Running commands">
      {commands.map((c) => (
        <li key={c.id} data-running={c.id}>
          <span>
            {c.command_type} #{c.id}
          </span>
          {c.progress === null ? (
            <span class="adm-hint">running, no progress reported yet</span>
          ) : (
            <CommandProgressBar id={c.id} progress={c.progress} labelPrefix="fleet-progress" />
          )}
        </li>
      ))}
    </ul>
  );
}
