import type { SessionFileName } from '@svc/protocol';

/** Served content types are ours, never the uploader's. */
export const CONTENT_TYPES: Record<SessionFileName, string> = {
  'session_results.json': 'application/json',
  'pipeline.log': 'text/plain; charset=utf-8',
  'report.html': 'text/html; charset=utf-8',
  'exec_summary.html': 'text/html; charset=utf-8',
};

/** Blob keys are grouped by upload day so no directory grows without bound. */
export function blobPrefix(now: Date): string {
  return `sessions/${now.toISOString().slice(0, 10)}`;
}
