import { Type, type Static } from '@sinclair/typebox';
import { IsoDateTime } from './common.ts';

/**
 * How far a running command has got (docs/api.md#agents-and-commands, "Progress reports"): what
 * `svc scan --progress-json` prints, what svcd sends the portal while a run_scan runs, and what
 * the console shows. One definition for the three: the writer, the agent and the portal read
 * and check a progress value with the functions below.
 */

/** A task name longer than this is cut (writer) or refused (portal). */
export const MAX_PROGRESS_TASK_LENGTH = 64;

export const CommandProgress = Type.Object(
  {
    task: Type.String({
      minLength: 1,
      maxLength: MAX_PROGRESS_TASK_LENGTH,
      description: "What runs now, one line (nmap's task, e.g. `SYN Stealth Scan`)",
    }),
    percent: Type.Number({ minimum: 0, maximum: 100, description: 'How much of that task is done' }),
  },
  { additionalProperties: false },
);
export type CommandProgress = Static<typeof CommandProgress>;

/** A command's latest progress as the portal answers it. */
export const CommandProgressView = Type.Object({
  task: Type.String(),
  percent: Type.Number(),
  reported_at: IsoDateTime,
});
export type CommandProgressView = Static<typeof CommandProgressView>;

export type ProgressRead = { ok: true; progress: CommandProgress } | { ok: false; message: string };

/** C0 and C1 control characters and DEL: a task is one printable line. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]+/g;

/**
 * Checks a progress value as received (a status report's `progress`, a line's `progress`):
 * the refusal names the field, the way `field` calls it.
 */
export function readCommandProgress(value: unknown, field = 'progress'): ProgressRead {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, message: `${field} must be an object {task, percent}` };
  const { task, percent, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return { ok: false, message: `${field} has an unknown field ${extra}` };
  if (typeof task !== 'string' || task.length === 0 || task.length > MAX_PROGRESS_TASK_LENGTH || CONTROL.test(task))
    return { ok: false, message: `${field}.task must be one line of 1 to ${MAX_PROGRESS_TASK_LENGTH} characters` };
  if (typeof percent !== 'number' || !Number.isFinite(percent) || percent < 0 || percent > 100)
    return { ok: false, message: `${field}.percent must be a number from 0 to 100` };
  return { ok: true, progress: { task, percent } };
}

/**
 * A progress value from what a scanner said: the task on one line (controls become one space),
 * cut to the limit; the percent within 0-100 to two decimals. null when nothing is left of the task.
 */
export function commandProgressOf(task: string, percent: number): CommandProgress | null {
  const line = task.replace(CONTROLS, ' ').replace(/ {2,}/g, ' ').trim().slice(0, MAX_PROGRESS_TASK_LENGTH).trim();
  if (line === '' || !Number.isFinite(percent)) return null;
  return { task: line, percent: Math.round(Math.min(100, Math.max(0, percent)) * 100) / 100 };
}

/** One `--progress-json` line (without its newline): `{"progress":{"task":…,"percent":…}}`. */
export function progressLine(progress: CommandProgress): string {
  return JSON.stringify({ progress: { task: progress.task, percent: progress.percent } });
}

/** The progress a `--progress-json` line carries; null for any other line (it is output, not progress). */
export function readProgressLine(line: string): CommandProgress | null {
  const text = line.trim();
  if (!text.startsWith('{"progress":')) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const keys = typeof value === 'object' && value !== null ? Object.keys(value) : [];
  if (keys.length !== 1) return null;
  const read = readCommandProgress((value as { progress: unknown }).progress);
  return read.ok ? read.progress : null;
}

/** Whether two progress values say the same (the agent sends a report only when something changed). */
export function sameProgress(a: CommandProgress | null, b: CommandProgress | null): boolean {
  return a !== null && b !== null && a.task === b.task && a.percent === b.percent;
}
