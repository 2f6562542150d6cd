import fs from 'node:fs';
import path from 'node:path';
import { type CommandPayloads, isScanPortList, PORT_LIST_RULE, readProgressLine } from '@svc/protocol';
import { listSessionIds, RESULTS_FILE, sessionPath } from '@svc/client/kit';
import { withPrivateTmp } from '../private-tmp.ts';
import { profileArgs } from '../scan-args.ts';
import { type CommandContext, failure, fromProcess, jsonAnswer, type Outcome } from './outcome.ts';
import { runProcess } from './spawn.ts';

/** run_scan and push_session: `svc scan` and `svc upload` as child processes with the daemon's settings. */

/** The default profile for run_scan. */
const DEFAULT_PROFILE = 'full_recon';

/**
 * `svc scan`'s arguments for a checked run_scan payload (full → --full, quick → -P quick_recon,
 * else none; `ports` → `--ports <list>`; always `--json --progress-json`). The port list is checked here once more with the
 * protocol's rule, right where it becomes an argument: only numbers, ranges and T:/U: reach it.
 */
export function scanArgs(payload: CommandPayloads['run_scan'], sessionsRoot: string): string[] {
  const mode = profileArgs(payload.profile ?? DEFAULT_PROFILE);
  if (payload.ports !== undefined && !isScanPortList(payload.ports))
    throw new Error(`run_scan: payload.ports must be ${PORT_LIST_RULE}`);
  return [
    'scan',
    '--targets',
    payload.targets,
    ...mode,
    ...(payload.ports === undefined ? [] : ['--ports', payload.ports]),
    '--json',
    // nmap's progress as JSON lines on stderr: svcd reports it to the portal (progress-report.ts).
    '--progress-json',
    '--sessions-dir',
    sessionsRoot,
    ...(payload.upload === true ? ['--upload'] : []),
  ];
}

/** The portal's id of an uploaded session, from a `--json` answer's `field` object (or the answer itself). */
function uploadedId(stdout: string, field: 'upload' | null): string | null {
  const answer = jsonAnswer(stdout);
  const holder = field === null ? answer : answer?.[field];
  const id = (holder as { session_id?: unknown } | null | undefined)?.session_id;
  return typeof id === 'string' ? id : null;
}

export async function runScan(payload: CommandPayloads['run_scan'], ctx: CommandContext): Promise<Outcome> {
  const { host } = ctx;
  // A scan killed at its deadline or cancelled leaves no temp file behind (private-tmp.ts).
  const run = await withPrivateTmp(
    host.childEnv,
    (m) => host.log.warning(m),
    (env) =>
      runProcess([...host.svcCommand, ...scanArgs(payload, host.sessionsRoot)], {
        env,
        deadline: ctx.deadline,
        onStart: ctx.onChild,
        signal: ctx.signal,
        // Progress lines go to the portal, not into the report's stderr; every other line stays.
        onStderrLine: (line) => {
          const progress = readProgressLine(line);
          if (progress !== null) ctx.onProgress?.(progress);
          return progress !== null;
        },
      }),
  );
  // Only an uploaded session is linked: the portal refuses a result naming a session it does not hold.
  const outcome = fromProcess(run, { sessionId: run.exitCode === 0 ? uploadedId(run.stdout, 'upload') : null });
  const local = jsonAnswer(run.stdout)?.['session_id'];
  if (run.exitCode === 0 && payload.upload !== true && typeof local === 'string')
    outcome.stdout = `session ${local} was not uploaded: it stays on the agent (push_session uploads it)\n${outcome.stdout}`;
  return outcome;
}

export async function pushSession(payload: CommandPayloads['push_session'], ctx: CommandContext): Promise<Outcome> {
  const root = ctx.host.sessionsRoot;
  const id = payload.session_id ?? listSessionIds(root).at(-1);
  // Reports name no directory of the host (outputs reach the tenant's users).
  if (id === undefined) return failure("push_session: no session to push: the agent's sessions directory holds none");
  const dir = sessionPath(root, id);
  if (!fs.existsSync(path.join(dir, RESULTS_FILE)))
    return failure(`push_session: session ${id} not found in the agent's sessions directory`);
  const run = await runProcess([...ctx.host.svcCommand, 'upload', dir, '--json'], {
    env: ctx.host.childEnv,
    deadline: ctx.deadline,
    onStart: ctx.onChild,
    signal: ctx.signal,
  });
  return fromProcess(run, { sessionId: run.exitCode === 0 ? uploadedId(run.stdout, null) : null });
}
