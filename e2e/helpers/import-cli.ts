import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { scannerSessionId } from '@svc/protocol';
import { runCli, SVC } from '@svc/test-support/cli';

/** What `svc import … --json` (and `svc upload` of a foreign file) prints. */
export interface ImportJson {
  path: string;
  session_id: string;
  format: string;
  upload?: { session_id: string; findings?: Record<string, number> };
}

export interface ImportRun {
  code: number;
  out: ImportJson;
  stderr: string;
}

/**
 * `svc … --json` against a portal with its key, sessions under `<work>/sessions` unless told
 * otherwise. Session ids have one-second resolution: each run starts once the clock has left
 * the previous run's second, so every run gets an id of its own.
 */
export function importCli(portal: () => { uploadUrl: string; key: string; work: string }) {
  let lastId = '';
  return async (args: string[], opts: { sessionsDir?: string } = {}): Promise<ImportRun> => {
    for (let i = 0; i < 100 && scannerSessionId(new Date()) <= lastId; i++) await sleep(25);
    const { uploadUrl, key, work } = portal();
    const r = await runCli(SVC, [...args, '--json'], {
      env: {
        CONSULTATION_API_URL: uploadUrl,
        SVC_API_KEY: key,
        SVC_SESSIONS_DIR: opts.sessionsDir ?? path.join(work, 'sessions'),
      },
      timeoutMs: 90_000,
    });
    const out = JSON.parse(r.stdout || '{}') as ImportJson;
    if (out.session_id !== undefined) lastId = out.session_id;
    return { code: r.code, out, stderr: r.stderr };
  };
}
