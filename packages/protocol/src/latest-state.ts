import { Type, type Static } from '@sinclair/typebox';
import { ClientId, IsoDateTime } from './common.ts';
import { Fingerprint } from './session-file/fingerprint-shape.ts';
import { SessionId } from './session-id.ts';
import { DECISION_SOURCES, DISPOSITIONS, REMEDIATION_STATUSES, SessionClientId, SEVERITIES } from './sessions.ts';

/** GET /api/sessions/latest-state (docs/findings-of-record.md#the-next-scan): what the next scan of a target starts from. */

/** GET /api/sessions/latest-state: the target whose latest state is asked for, and the client when the caller sees several. */
export const LatestStateQuery = Type.Object({
  target: Type.Optional(Type.String({ maxLength: 512, description: 'metadata.target of the sessions, as uploaded' })),
  client_id: Type.Optional(SessionClientId),
});
export type LatestStateQuery = Static<typeof LatestStateQuery>;

const nullableText = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

/** One remediation item of the latest session, as the next scan needs it (docs/decisions.md#prior-state-from-the-portal). */
export const LatestStateEntry = Type.Object({
  fingerprint: Type.Union([Fingerprint, Type.Null()], {
    description: 'findings[].fingerprint; null for files written before fingerprints',
  }),
  title: Type.String({ description: 'Title of the finding' }),
  host: nullableText('Affected host'),
  port: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()], {
    description: 'Port of the finding, from findings[] by finding_id',
  }),
  severity: Type.Union([Type.Union(SEVERITIES.map((s) => Type.Literal(s))), Type.Null()]),
  status: Type.Union([Type.Union(REMEDIATION_STATUSES.map((s) => Type.Literal(s))), Type.Null()]),
  status_changed: nullableText('Time of the last status change'),
  note: Type.String({ description: 'Free text ("" when none)' }),
  first_seen: nullableText('Session id where the item first appeared'),
  prior_status: Type.Union([Type.Union(REMEDIATION_STATUSES.map((s) => Type.Literal(s))), Type.Null()]),
  exception_status: Type.Union([Type.Literal('accepted'), Type.Literal('expired'), Type.Null()]),
  exception_reason: nullableText('Justification'),
  exception_approver: nullableText('Approver'),
  exception_approved_at: nullableText('Approval time'),
  exception_expiry: nullableText('Last valid day, YYYY-MM-DD'),
  // Findings of record (docs/findings-of-record.md): what the next scan carries besides the documented fields.
  protocol: Type.Optional(nullableText('Transport of the port (tcp, udp)')),
  exception_source: Type.Optional(Type.Union([Type.Union(DECISION_SOURCES.map((s) => Type.Literal(s))), Type.Null()])),
  exception_claimed_approver: Type.Optional(nullableText('The approver an uploaded file named for it')),
  status_source: Type.Optional(Type.Union(DECISION_SOURCES.map((s) => Type.Literal(s)))),
  disposition: Type.Optional(Type.Union([Type.Union(DISPOSITIONS.map((s) => Type.Literal(s))), Type.Null()])),
  disposition_reason: Type.Optional(nullableText('Why it is not real')),
  disposition_by: Type.Optional(nullableText('Who said so')),
  disposition_at: Type.Optional(nullableText('When')),
  last_seen: Type.Optional(nullableText('Session id where it was last seen')),
  resolved_at: Type.Optional(nullableText('When it was last resolved')),
  reopened_at: Type.Optional(nullableText('When it was last seen again after being resolved')),
});
export type LatestStateEntry = Static<typeof LatestStateEntry>;

export const LatestStateResponse = Type.Object({
  session_id: SessionId,
  client_id: Type.Union([ClientId, Type.Null()]),
  target: Type.String(),
  uploaded_at: IsoDateTime,
  scanned_at: Type.Union([Type.String(), Type.Null()], { description: 'metadata.finished_at of the session' }),
  session_stored: Type.Optional(
    Type.Boolean({ description: 'false when that session was deleted since (retention): the records remain' }),
  ),
  remediation: Type.Array(LatestStateEntry, {
    description: 'the open findings of record of the target (seen in the latest session or not)',
  }),
  remediation_resolved: Type.Array(LatestStateEntry),
});
export type LatestStateResponse = Static<typeof LatestStateResponse>;
