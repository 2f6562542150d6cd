import fs from 'node:fs';
import { isScannerSessionId, lenient, type SessionFile } from '@svc/protocol';
import { within } from './root.ts';

/**
 * The sessions a sessions root holds: only directories named by a session id and holding a
 * readable session_results.json count; temp directories of interrupted runs and broken files
 * are skipped. A target's earlier sessions as a new one sees them (prior session, trend):
 * packages/client/src/session-dir/target-history.ts.
 */

export const RESULTS_FILE = 'session_results.json';

/** Ids of the whole sessions under `root`, oldest first. */
export function listSessionIds(root: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(root, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter(
      (e) => e.isDirectory() && isScannerSessionId(e.name) && fs.existsSync(within(within(root, e.name), RESULTS_FILE)),
    )
    .map((e) => e.name)
    .sort();
}

export function readSession(root: string, id: string): SessionFile | null {
  try {
    const doc: unknown = JSON.parse(fs.readFileSync(within(within(root, id), RESULTS_FILE), 'utf8'));
    return lenient.isObj(doc) ? (doc as SessionFile) : null;
  } catch {
    return null;
  }
}
