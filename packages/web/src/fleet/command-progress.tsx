import type { CommandProgressView } from '@svc/protocol';
import { formatPercent } from '../ui/format.ts';

/**
 * A running command's progress as its agent last reported it (run_scan: nmap's task and
 * percent; docs/api.md#agents-and-commands, "Progress reports"): a native <progress> bar named
 * by the text beside it, and when that report came. The command view reloads while the command
 * can change, so the bar follows the agent's reports (at most one every 15 s).
 */

/** `14:03:25 UTC`: the report's time of day, to the second (reports come every 15 s). */
export function progressTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '–' : `${d.toISOString().slice(11, 19)} UTC`;
}

export function CommandProgressBar({ id, progress }: { id: number; progress: CommandProgressView }) {
  const label = `cmd-progress-${id}`;
  return (
    <div class="adm-progress" data-field="progress">
      <progress max={100} value={progress.percent} aria-labelledby={label} />
      <span id={label}>
        {progress.task}: {formatPercent(progress.percent)}
      </span>
      <span class="adm-hint">as of {progressTime(progress.reported_at)}</span>
    </div>
  );
}
