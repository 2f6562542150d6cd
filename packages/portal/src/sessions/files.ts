import { createHash } from 'node:crypto';
import type { SessionFileName } from '@svc/protocol';

/** Served content types are ours, never the uploader's. */
export const CONTENT_TYPES: Record<SessionFileName, string> = {
  'session_results.json': 'application/json',
  'pipeline.log': 'text/plain; charset=utf-8',
  'report.html': 'text/html; charset=utf-8',
  'exec_summary.html': 'text/html; charset=utf-8',
};

const PLAIN_CLIENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The blob directory of a client (docs/api.md#ids-are-per-client): files of different clients never share a
 * directory. A client id made only of letters, digits, `_` and `-` is used as it is
 * (`c-<id>`); any other (dots, colons, `@`, long ids) by its SHA-256 (`h-<hex>`), so a
 * client id can never make a path segment such as `..`; sessions without a client go
 * under `none`. The forms cannot collide.
 */
export function clientSegment(clientId: string | null): string {
  // The legacy key before its session_json has said which client the upload is for.
  if (clientId === null) return 'legacy';
  if (clientId === '') return 'none';
  if (PLAIN_CLIENT_ID.test(clientId)) return `c-${clientId}`;
  return `h-${createHash('sha256').update(clientId).digest('hex').slice(0, 32)}`;
}

/** Blob keys are grouped by client, then by upload day so no directory grows without bound. */
export function blobPrefix(clientId: string | null, now: Date): string {
  return `sessions/${clientSegment(clientId)}/${now.toISOString().slice(0, 10)}`;
}
