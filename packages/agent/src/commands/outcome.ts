import type { CommandProgress } from '@svc/protocol';
import type { CommandHost } from '../types.ts';
import type { ChildIdentity, ProcessRun } from './spawn.ts';

/** What a command ended with, before it becomes a status report; `after` is what the daemon does after reporting it. */
export interface Outcome {
  ok: boolean;
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The portal's session id (run_scan with upload, push_session). */
  sessionId?: string | null;
  after?: 'restart' | 'reload' | 'shutdown' | 'shutdown-now';
}

/** A command's failure of its own (a refused value, a missing session, a git step that failed). */
export const EXIT_FAILED = 1;
/** The payload broke the payload rules (checked again on the agent). */
export const EXIT_REFUSED = 2;
/** The agent stopped (crash, kill -9, power loss) while the command ran; reported on the next start. */
export const EXIT_INTERRUPTED = 125;

/** What a command needs besides its payload. */
export interface CommandContext {
  host: CommandHost;
  /** Epoch milliseconds: SVC_CMD_TIMEOUT (SVC_SCAN_TIMEOUT for run_scan) after the command started. */
  deadline: number;
  /** Tells the journal which child process runs now. */
  onChild: (child: ChildIdentity) => void;
  /** The command's progress as it runs (run_scan), for the portal's console. */
  onProgress?: ((progress: CommandProgress) => void) | undefined;
  /** Aborted when the portal cancels the command: run_scan and push_session kill their child's tree. */
  signal?: AbortSignal | undefined;
}

export const done = (stdout: string, extra: Partial<Outcome> = {}): Outcome => ({
  ok: true,
  exitCode: 0,
  stdout,
  stderr: '',
  ...extra,
});

export const failure = (stderr: string, exitCode = EXIT_FAILED, stdout = ''): Outcome => ({
  ok: false,
  exitCode,
  stdout,
  stderr: stderr.endsWith('\n') ? stderr : `${stderr}\n`,
});

/** A child's run as an outcome: exit 0 is success, anything else (124 for a timeout) failure. */
export function fromProcess(run: ProcessRun, extra: Partial<Outcome> = {}): Outcome {
  const stderr = run.timedOut
    ? `${run.stderr}command timed out: the process tree was killed\n`
    : run.cancelled === true
      ? `${run.stderr}command cancelled: the process tree was killed\n`
      : run.stderr;
  return { ok: run.exitCode === 0, exitCode: run.exitCode, stdout: run.stdout, stderr, ...extra };
}

const asObject = (text: string): Record<string, unknown> | null => {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

/** A child's `--json` answer: its whole stdout, or the object starting on the last line that opens one. */
export function jsonAnswer(stdout: string): Record<string, unknown> | null {
  const whole = asObject(stdout);
  if (whole !== null) return whole;
  const start = stdout.lastIndexOf('\n{');
  return start < 0 ? null : asObject(stdout.slice(start + 1));
}
