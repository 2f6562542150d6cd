import path from 'node:path';
import type { UploadResponse } from '@svc/protocol';
import type { Settings } from '../kit/config/settings.ts';
import type { ClientTier } from '../kit/license/format.ts';
import { createPortalClient } from '../kit/portal/client.ts';
import { isSetupError, PortalError } from '../kit/portal/errors.ts';
import type { PortalTarget } from '../kit/portal/target.ts';
import { LOG_FILE } from '../session-dir/produce.ts';
import { attachBenchmark } from './benchmark.ts';
import { sessionTargetConflict } from './outcome.ts';
import { rendererFor } from './render-again.ts';

/** The upload after a finished run failed; the session directory is written and named in the message. */
export class ScanUploadError extends Error {
  override name = 'ScanUploadError';
  readonly path: string;
  constructor(message: string, sessionPath: string, options?: ErrorOptions) {
    super(message, options);
    this.path = sessionPath;
  }
}

/** What the portal said of an upload: its id and link, and (newer portals) what it merged into the findings of record. */
export type UploadedSession = Pick<UploadResponse, 'session_id' | 'share_url' | 'message' | 'findings'>;

/** The files of a just-written session directory, as the upload takes them. */
function uploadFilesOf(dir: string, names: readonly string[]) {
  const named = (re: RegExp) => {
    const name = names.find((n) => re.test(n));
    return name === undefined ? undefined : path.join(dir, name);
  };
  return {
    session: path.join(dir, 'session_results.json'),
    log: names.includes(LOG_FILE) ? path.join(dir, LOG_FILE) : undefined,
    report: named(/^report_.*\.html$/),
    exec: named(/^exec_summary_.*\.html$/),
  };
}

/**
 * Uploads a session directory a run has just written (`svc scan`, `svc import`), then attaches
 * the portal's benchmark when the tier allows. Throws ScanUploadError when the portal refuses or
 * cannot be reached; the directory stays for `svc upload <dir>` to retry.
 */
export async function uploadProduced(opts: {
  target: PortalTarget;
  produced: { path: string; files: readonly string[] };
  tier: ClientTier;
  settings: Settings;
  warn: (message: string) => void;
}): Promise<UploadedSession> {
  const { produced, warn } = opts;
  const client = createPortalClient({ target: opts.target });
  let body: Awaited<ReturnType<typeof client.upload>>;
  const files = uploadFilesOf(produced.path, produced.files);
  try {
    body = await client.upload(files);
  } catch (err) {
    if (err instanceof PortalError && !isSetupError(err)) {
      const why =
        sessionTargetConflict(err, files.session) ??
        (err.kind === 'too_large' ? err.message : `Upload failed: ${err.message}`);
      throw new ScanUploadError(`${why} (the session is in ${produced.path})`, produced.path, { cause: err });
    }
    throw err;
  }
  await attachBenchmark({
    client,
    sessionDir: produced.path,
    sessionId: body.session_id,
    tier: opts.tier,
    render: rendererFor(produced.path, opts.settings, warn),
    warn,
  });
  return {
    session_id: body.session_id,
    share_url: body.share_url,
    message: body.message,
    ...(body.findings === undefined ? {} : { findings: body.findings }),
  };
}
