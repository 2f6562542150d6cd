import { randomBytes } from 'node:crypto';
import { SESSION_ID_PATTERN } from '@svc/protocol';

/**
 * The session the smoke test uploads: the smallest document the portal accepts
 * (docs/session-file.md: only the session id is required; a v2.6-style file like
 * packages/portal/tests/fixtures/session-minimal.json), marked so that a stray copy left
 * behind (--no-cleanup, a failed cleanup) is recognisable in listings.
 */

export const SMOKE_TARGET = 'svc-e2e-smoke-test';

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYYMMDD_HHMMSS` in local time, the way the scanner names its sessions. */
export function scannerStamp(d: Date): string {
  return `${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}_${pad(d.getHours())}${pad(d.getMinutes())}${pad(d.getSeconds())}`;
}

/**
 * A fresh session id: the scanner's stamp plus `_smoke-<8 hex>`, so two runs in the same
 * second (or against the same portal from two hosts) never collide, and never replace a
 * real scan's session. Matches SESSION_ID_PATTERN (^[a-zA-Z0-9_-]+$).
 */
export function smokeSessionId(now: Date, random: () => string = () => randomBytes(4).toString('hex')): string {
  const id = `${scannerStamp(now)}_smoke-${random()}`;
  if (!new RegExp(SESSION_ID_PATTERN).test(id))
    throw new Error(`generated session id ${id} does not match ${SESSION_ID_PATTERN}`);
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
