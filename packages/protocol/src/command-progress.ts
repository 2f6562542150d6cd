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

/**
 * The stages of `svc scan`'s pipeline, in the order they run: discovery tools, nmap,
 * the enrichment tools, the session and its report, the upload. Only nmap reports a percent of
 * its own; every other stage is reported once, when it starts, with percent 0.
 */
export const PROGRESS_STAGES = ['discovery', 'nmap', 'enrichment', 'session', 'upload'] as const;
export type ProgressStage = (typeof PROGRESS_STAGES)[number];

/** What each stage's first report says. */
export const STAGE_TASKS: Readonly<Record<ProgressStage, string>> = {
  discovery: 'Discovering hosts',
  nmap: 'Starting nmap',
  enrichment: 'Running the enrichment tools',
  session: 'Writing the session and its report',
  upload: 'Uploading to the portal',
};

const Stage = Type.Union(
  PROGRESS_STAGES.map((s) => Type.Literal(s)),
  { description: "The pipeline's stage (svc scan); absent from reports of older agents" },
);

export const CommandProgress = Type.Object(
  {
    task: Type.String({
      minLength: 1,
      maxLength: MAX_PROGRESS_TASK_LENGTH,
      description: "What runs now, one line (nmap's task, e.g. `SYN Stealth Scan`)",
    }),
    percent: Type.Number({ minimum: 0, maximum: 100, description: 'How much of that task is done' }),
    stage: Type.Optional(Stage),
  },
  { additionalProperties: false },
);
export type CommandProgress = Static<typeof CommandProgress>;

/** A command's latest progress as the portal answers it. */
export const CommandProgressView = Type.Object({
  task: Type.String(),
  percent: Type.Number(),
  stage: Type.Optional(Stage),
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
  const { task, percent, stage, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return { ok: false, message: `${field} has an unknown field ${extra}` };
  if (typeof task !== 'string' || task.length === 0 || task.length > MAX_PROGRESS_TASK_LENGTH || CONTROL.test(task))
    return { ok: false, message: `${field}.task must be one line of 1 to ${MAX_PROGRESS_TASK_LENGTH} characters` };
  if (typeof percent !== 'number' || !Number.isFinite(percent) || percent < 0 || percent > 100)
    return { ok: false, message: `${field}.percent must be a number from 0 to 100` };
  if (stage !== undefined && !isProgressStage(stage))
    return { ok: false, message: `${field}.stage must be one of ${PROGRESS_STAGES.join(', ')}` };
  return { ok: true, progress: { task, percent, ...(stage === undefined ? {} : { stage }) } };
}

export function isProgressStage(value: unknown): value is ProgressStage {
  return typeof value === 'string' && (PROGRESS_STAGES as readonly string[]).includes(value);
}

/** A stage's first report: its task, percent 0. */
export function stageProgress(stage: ProgressStage): CommandProgress {
  return { task: STAGE_TASKS[stage], percent: 0, stage };
}

/**
 * A progress value from what a scanner said: the task on one line (controls become one space),
 * cut to the limit; the percent within 0-100 to two decimals. null when nothing is left of the task.
 */
export function commandProgressOf(task: string, percent: number, stage?: ProgressStage): CommandProgress | null {
  const line = task.replace(CONTROLS, ' ').replace(/ {2,}/g, ' ').trim().slice(0, MAX_PROGRESS_TASK_LENGTH).trim();
  if (line === '' || !Number.isFinite(percent)) return null;
  const rounded = Math.round(Math.min(100, Math.max(0, percent)) * 100) / 100;
  return { task: line, percent: rounded, ...(stage === undefined ? {} : { stage }) };
}

/** One `--progress-json` line (without its newline): `{"progress":{"task":…,"percent":…,"stage":…}}`. */
export function progressLine(progress: CommandProgress): string {
  const { task, percent, stage } = progress;
  return JSON.stringify({ progress: { task, percent, ...(stage === undefined ? {} : { stage }) } });
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
  return a !== null && b !== null && a.task === b.task && a.percent === b.percent && a.stage === b.stage;
}
