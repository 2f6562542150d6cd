import { Type, type Static } from '@sinclair/typebox';
import { IsoDateTime } from './common.ts';
import { SessionId } from './session-id.ts';

/**
 * Audit event types: the list, then the command events, then extensions that
 * keep the trail complete for administrative changes beyond the original list.
 */
export const AUDIT_EVENT_TYPES = [
  'scan_completed',
  'status_changed',
  'remediation_updated',
  'session_deleted',
  'agent_first_seen',
  'agent_deregistered',
  'agent_reregistered',
  'agent_purged',
  'license_created',
  'license_revoked',
  'license_deleted',
  'command_dispatched',
  'command_completed',
  'command_failed',
  // extensions
  'license_deactivated',
  'license_activated',
  'user_created',
  'user_updated',
  'user_deleted',
  'user_sessions_revoked',
  'webhook_disabled',
  'share_rotated',
  'share_revoked',
  'vuln_feed_imported',
  'target_purged',
  'remediation_settings_changed',
  // An admin asked the agent to stop a running command (not a webhook event: the command's end is `command_failed`).
  'command_cancel_requested',
  'schedule_created',
  'schedule_updated',
  'schedule_deleted',
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export const AuditEvent = Type.Object({
  id: Type.Integer(),
  event_type: Type.Union(AUDIT_EVENT_TYPES.map((t) => Type.Literal(t))),
  session_id: Type.Union([Type.String(), Type.Null()]),
  client_id: Type.Union([Type.String(), Type.Null()]),
  actor: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  created_at: IsoDateTime,
});
export type AuditEvent = Static<typeof AuditEvent>;

export const AUDIT_MAX_DAYS = 90;
export const AUDIT_DEFAULT_DAYS = 30;

export const AuditQuery = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_MAX_DAYS, default: AUDIT_DEFAULT_DAYS })),
    type: Type.Optional(Type.Union(AUDIT_EVENT_TYPES.map((t) => Type.Literal(t)))),
    session: Type.Optional(SessionId),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 5000,
        default: 1000,
        description: 'most recent events returned; total counts all matches',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;

export const AuditResponse = Type.Object({
  events: Type.Array(AuditEvent),
  days: Type.Integer(),
  total: Type.Integer({ description: 'number of matching events in the window (events may be capped by limit)' }),
});
export type AuditResponse = Static<typeof AuditResponse>;
