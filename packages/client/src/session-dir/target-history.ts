import { lenient, type SessionFile } from '@svc/protocol';
import { listSessionIds, readSession } from '../kit/session-dir/history.ts';
import type { TrendPoint } from '../report/index.ts';

/**
 * What the sessions root already holds for a target: the prior session (the newest whole
 * session of the same metadata.target) and the trend points of its sessions.
 */

/** How many earlier sessions of the target the trend chart shows at most. */
export const TREND_MAX = 50;

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
