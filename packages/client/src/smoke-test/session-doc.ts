import { randomBytes } from 'node:crypto';
import { isValidSessionId, SESSION_ID_PATTERN, scannerSessionId } from '@svc/protocol';

/**
 * The session the smoke test uploads: the smallest document the portal accepts
 * (docs/session-file.md: only the session id is required; a v2.6-style file like
 * packages/portal/tests/fixtures/session-minimal.json), marked so that a stray copy left
 * behind (--no-cleanup, a failed cleanup) is recognisable in listings.
 */

export const SMOKE_TARGET = 'svc-e2e-smoke-test';

/**
 * A fresh session id: the scanner's own id for this second (UTC, as every scan names its
 * session) plus `_smoke-<8 hex>`, so two runs in the same second (or against the same portal
 * from two hosts) never collide, and never replace a real scan's session.
 */
export function smokeSessionId(now: Date, random: () => string = () => randomBytes(4).toString('hex')): string {
  const id = `${scannerSessionId(now)}_smoke-${random()}`;
  if (!isValidSessionId(id)) throw new Error(`generated session id ${id} does not match ${SESSION_ID_PATTERN}`);
  return id;
}

/** The session_results.json document for `sessionId`: no findings, no hosts. */
export function smokeSessionDoc(sessionId: string, now: Date, toolVersion: string): Record<string, unknown> {
  return {
    metadata: {
      session_id: sessionId,
      target: SMOKE_TARGET,
      tool_version: `svc-e2e-smoke-test/${toolVersion}`,
      generated_at: now.toISOString(),
    },
    summary: { total_findings: 0, total_hosts: 0 },
    findings: [],
  };
}
