import type { Selectable } from 'kysely';
import type { SessionFileName, SessionView } from '@svc/protocol';
import type { SessionsTable } from '../db/schema.ts';
import { defaultRemediationSummary } from './derive.ts';
import { clientIdOut } from './access.ts';
import { shareUrl } from './share.ts';

export type SessionRow = Selectable<SessionsTable>;

/** The listing and detail view of a session. The blob keys stay private. */
export function presentSession(row: SessionRow, shareToken: string | null, baseUrl: string): SessionView {
  const m = row.metadata;
  return {
    ...m,
    // SPEC: remediation_summary is defaulted at read time when absent (rows of older files).
    remediation_summary: m.remediation_summary ?? defaultRemediationSummary(),
    client_id: clientIdOut(row.client_id),
    status: row.status,
    // null while the share link is revoked (until it is rotated again or the session re-uploaded).
    share_url: shareToken === null ? null : shareUrl(baseUrl, shareToken),
    files: Object.entries(row.files).map(([name, f]) => ({
      name: name as SessionFileName,
      size: f.size,
      sha256: f.sha256,
      content_type: f.content_type,
    })),
    uploaded_at: row.uploaded_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
  };
}
