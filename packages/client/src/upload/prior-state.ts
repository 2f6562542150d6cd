import fs from 'node:fs';
import path from 'node:path';
import { lenient, type SessionFile } from '@svc/protocol';
import type { Settings } from '../kit/config/settings.ts';
import { reapplyPriorState } from '../pipeline/portal-state.ts';
import { portalPriorState } from '../kit/portal/latest-state.ts';
import type { UploadFiles } from '../kit/portal/requests.ts';
import type { PortalTarget } from '../kit/portal/target.ts';
import { historyOf } from '../session-dir/target-history.ts';
import { replaceSessionFile } from '../session-dir/write.ts';
import { rendererFor } from './render-again.ts';

/**
 * Before `svc upload` of a session directory: the portal's latest state of the session's target
 * (triage made since the scan) is merged in as `svc scan` would have (pipeline/portal-state.ts),
 * and the directory's session_results.json and reports are rewritten when that changes them.
 * A session that is already the portal's latest, or older than it, is left as it is.
 * Returns whether the directory changed.
 */
export async function applyPortalState(opts: {
  portal: PortalTarget;
  sessionDir: string;
  files: UploadFiles;
  settings: Settings;
  warn: (message: string) => void;
}): Promise<boolean> {
  let doc: SessionFile;
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(opts.files.session, 'utf8'));
    if (!lenient.isObj(parsed)) return false;
    doc = parsed as SessionFile;
  } catch {
    return false; // The portal judges the file; its answer says what is wrong.
  }
  const target = lenient.str(doc.metadata?.target)?.trim();
  const id = lenient.str(doc.metadata?.session_id);
  const end = Date.parse(lenient.str(doc.metadata?.finished_at) ?? '');
  if (!target || id === null || Number.isNaN(end) || !Array.isArray(doc.remediation)) return false;
  const clientId = lenient.str(doc.metadata?.client_id) ?? undefined;
  const state = await portalPriorState(opts.portal, target, clientId, opts.warn);
  if (state === null || state.session_id === id) return false;
  const portalEnd = Date.parse(state.scanned_at ?? state.uploaded_at);
  if (!Number.isNaN(portalEnd) && portalEnd >= end) return false;

  const dir = path.resolve(opts.sessionDir);
  const updated = reapplyPriorState(doc, historyOf(path.dirname(dir), target, path.basename(dir)).prior, state);
  if (updated === null || JSON.stringify(updated) === JSON.stringify(doc)) return false;
  replaceSessionFile(opts.files.session, `${JSON.stringify(updated, null, 2)}\n`);
  const render = rendererFor(opts.sessionDir, opts.settings, opts.warn)(updated);
  if (opts.files.report !== undefined) replaceSessionFile(opts.files.report, render.report);
  if (opts.files.exec !== undefined) replaceSessionFile(opts.files.exec, render.execSummary);
  return true;
}
