import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ClientId, IsoDateTime } from './common.ts';
import { FINDING_CHANGES, type FindingChange } from './findings.ts';
import { sessionHref } from './session-link.ts';
import { SessionClientId } from './sessions.ts';

/**
 * GET /api/targets/changes: per target, what its latest scan changed in the findings of record
 * since the scan before it (docs/findings-of-record.md#what-changed). The console's "What
 * changed" page reads it; each count links to the session view filtered by that change.
 */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** Targets per page of GET /api/targets/changes: by default, and at most. */
export const TARGET_CHANGES_PAGE_DEFAULT = 100;
export const TARGET_CHANGES_PAGE_MAX = 1000;

export const TargetChangesQuery = Type.Object(
  {
    client_id: Type.Optional(SessionClientId),
    target: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'one target, exactly' })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: TARGET_CHANGES_PAGE_MAX, default: TARGET_CHANGES_PAGE_DEFAULT }),
    ),
    cursor: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: 'next_cursor of the previous page; any other cursor is a 400 (docs/api.md#cursors)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type TargetChangesQuery = Static<typeof TargetChangesQuery>;

export const ChangeCounts = Type.Object(
  Object.fromEntries(FINDING_CHANGES.map((c) => [c, Type.Integer({ minimum: 0 })])) as Record<
    FindingChange,
    ReturnType<typeof Type.Integer>
  >,
  { description: 'what the scan did to the findings of record of its target' },
);
export type ChangeCounts = Static<typeof ChangeCounts>;

export const TargetChanges = Type.Object({
  client_id: Nullable(ClientId),
  target: Type.String(),
  session_id: Nullable(Type.String({ description: 'the latest scan of the target' })),
  scanned_at: Nullable(IsoDateTime),
  session_stored: Type.Boolean({ description: 'false once retention removed the latest session (counts are then 0)' }),
  previous_session_id: Nullable(Type.String({ description: 'the stored scan of the target before it; null: none' })),
  previous_scanned_at: Nullable(IsoDateTime),
  changes: ChangeCounts,
});
export type TargetChanges = Static<typeof TargetChanges>;

export const TargetChangesResponse = Type.Object({
  targets: Type.Array(TargetChanges, { description: 'by client id, then target' }),
  next_cursor: Nullable(Type.String({ description: 'the next page; null: this is the last' })),
});
export type TargetChangesResponse = Static<typeof TargetChangesResponse>;

/** The session view showing the findings one change of that session counts (its findings table filtered). */
export function sessionChangeHref(sessionId: string, clientId: string | null, change: FindingChange): string {
  return `${sessionHref(sessionId, clientId)}&change=${change}`;
}
