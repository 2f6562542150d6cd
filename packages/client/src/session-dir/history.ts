import fs from 'node:fs';
import { isScannerSessionId, lenient, type SessionFile } from '@svc/protocol';
import type { TrendPoint } from '../report/index.ts';
import { within } from './root.ts';

/**
 * What the sessions root already holds for a target: the prior session (the newest whole
 * session of the same metadata.target) and the trend points of its sessions. Only directories
 * named by a session id and holding a readable session_results.json count; temp directories
 * of interrupted runs and broken files are skipped.
 */

export const RESULTS_FILE = 'session_results.json';
/** How many earlier sessions of the target the trend chart shows at most. */
export const TREND_MAX = 50;

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

const targetOf = (doc: SessionFile): string | null => lenient.str(doc.metadata?.target)?.trim() ?? null;

export function trendPointOf(doc: SessionFile): TrendPoint {
  const summary: Record<string, unknown> = lenient.isObj(doc.summary) ? doc.summary : {};
  const metadata: Record<string, unknown> = lenient.isObj(doc.metadata) ? doc.metadata : {};
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    session_id: lenient.str(metadata['session_id']) ?? '',
    finished_at: lenient.str(metadata['finished_at']) ?? '',
    risk_score: num(summary['risk_score']) ?? 0,
    risk_score_operational: num(summary['risk_score_operational']) ?? num(metadata['risk_score_operational']),
  };
}

export interface History {
  prior: SessionFile | null;
  /** Earlier sessions of the target, oldest first (the current one is appended by the caller). */
  trend: TrendPoint[];
}

/** The target's sessions in `root` older than `beforeId`. */
export function historyOf(root: string, target: string, beforeId: string): History {
  const wanted = target.trim();
  const docs: SessionFile[] = [];
  const ids = listSessionIds(root).filter((id) => id < beforeId);
  for (let i = ids.length - 1; i >= 0 && docs.length < TREND_MAX; i--) {
    const doc = readSession(root, ids[i]!);
    if (doc !== null && targetOf(doc) === wanted) docs.push(doc);
  }
  return { prior: docs[0] ?? null, trend: docs.reverse().map(trendPointOf) };
}
