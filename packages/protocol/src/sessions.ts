import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ClientId, IsoDateTime } from './common.ts';
import { SessionId } from './session-id.ts';
import { SHARE_TOKEN_PATTERN } from './share-token.ts';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const REMEDIATION_STATUSES = ['new', 'persistent', 'in_progress', 'resolved', 'deferred'] as const;
export type RemediationStatus = (typeof REMEDIATION_STATUSES)[number];
/**
 * The statuses a person chooses in the console. The others are the scanner's own: a
 * scan finds a finding (`new`), finds it again (`persistent`) or no longer finds it (`resolved`).
 * PATCH /api/remediation-update still takes all five; the console offers only these.
 */
export const PERSON_STATUSES = ['in_progress', 'deferred'] as const satisfies readonly RemediationStatus[];
export const SCANNER_STATUSES = ['new', 'persistent', 'resolved'] as const satisfies readonly RemediationStatus[];
/** Dispositions beside the status: a finding that is not real. A separate field, never a sixth status. */
export const DISPOSITIONS = ['false_positive'] as const;
export type Disposition = (typeof DISPOSITIONS)[number];
/** Who made a decision on a finding: a person (console, API), an uploaded file, the scan itself, or the migration of older triage. */
export const DECISION_SOURCES = ['person', 'upload', 'scan', 'migration'] as const;
export type DecisionSource = (typeof DECISION_SOURCES)[number];
export const SESSION_STATUSES = ['new', 'in_review', 'resolved', 'archived'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** Stored file names (docs/api.md#sessions) and the upload field each comes from. */
export const SESSION_FILES = ['session_results.json', 'pipeline.log', 'report.html', 'exec_summary.html'] as const;
export type SessionFileName = (typeof SESSION_FILES)[number];
export const UPLOAD_FIELDS: Record<string, SessionFileName> = {
  session_json: 'session_results.json',
  pipeline_log: 'pipeline.log',
  report_html: 'report.html',
  exec_summary_html: 'exec_summary.html',
};
/** Display files that PUT /api/refresh may replace. */
export const REFRESHABLE_FILES = ['report.html', 'exec_summary.html'] as const;

const BySeverity = Type.Object({
  critical: Type.Number(),
  high: Type.Number(),
  medium: Type.Number(),
  low: Type.Number(),
  info: Type.Number(),
});
export type BySeverity = Static<typeof BySeverity>;

export const RemediationSummary = Type.Object({
  total: Type.Number(),
  resolved_count: Type.Number(),
  by_status: Type.Object({
    new: Type.Number(),
    persistent: Type.Number(),
    in_progress: Type.Number(),
    resolved: Type.Number(),
    deferred: Type.Number(),
  }),
  by_severity: BySeverity,
});
export type RemediationSummary = Static<typeof RemediationSummary>;

export const ExceptionSummary = Type.Object({
  total_exceptions: Type.Number(),
  by_status: Type.Object({ accepted: Type.Number(), expired: Type.Number() }),
  score_delta: Type.Number(),
  risk_score_operational: Nullable(Type.Number()),
  risk_grade_operational: Nullable(Type.String()),
});
export type ExceptionSummary = Static<typeof ExceptionSummary>;

export const ComplianceSummary = Type.Object({
  total_mappings: Type.Number(),
  by_framework: Type.Array(
    Type.Object({
      framework: Type.String(),
      mapped_controls: Type.Number(),
      total_controls: Nullable(Type.Number()),
      gap_controls: Nullable(Type.Number()),
      findings_count: Type.Number(),
    }),
  ),
});
export type ComplianceSummary = Static<typeof ComplianceSummary>;

export const Orc964Summary = Type.Object({
  enabled: Type.Boolean(),
  technical_covered: Type.Number(),
  technical_total: Type.Number(),
  attest_pending: Type.Number(),
});
export type Orc964Summary = Static<typeof Orc964Summary>;

export const AlertsSummary = Type.Object(
  {
    evaluated_at: Nullable(Type.String()),
    total_triggered: Type.Number(),
    alerts_triggered: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    config: Nullable(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: true },
);
export type AlertsSummary = Static<typeof AlertsSummary>;

/** The metadata the portal derives from a session file at upload. */
export const SessionMetadata = Type.Object({
  session_id: SessionId,
  client_id: Nullable(Type.String()),
  client: Nullable(Type.String()),
  target: Nullable(Type.String()),
  risk_score: Nullable(Type.Number()),
  risk_grade: Nullable(Type.String()),
  total_findings: Type.Number(),
  total_hosts: Type.Number(),
  severity_summary: BySeverity,
  tool_version: Nullable(Type.String()),
  has_exec_summary: Type.Boolean(),
  has_topology: Type.Boolean(),
  remediation_summary: RemediationSummary,
  exception_summary: ExceptionSummary,
  disposition_summary: Type.Optional(
    Type.Object({ false_positive: Type.Number({ description: 'open findings marked as false positives' }) }),
  ),
  compliance_summary: ComplianceSummary,
  orc964_summary: Nullable(Orc964Summary),
  alerts_summary: Nullable(AlertsSummary),
  schedule_id: Nullable(Type.String()),
  schedule_cron: Nullable(Type.String()),
  schedule_profile: Nullable(Type.String()),
  is_scheduled: Type.Boolean(),
  scheduled_by: Nullable(Type.String()),
});
export type SessionMetadata = Static<typeof SessionMetadata>;

export const StoredFile = Type.Object({
  name: Type.String(),
  size: Type.Integer(),
  sha256: Type.String(),
  content_type: Type.String(),
});
export type StoredFile = Static<typeof StoredFile>;

/** A session as listing and detail present it (never the share token in listings of other tenants). */
export const SessionView = Type.Intersect([
  SessionMetadata,
  Type.Object({
    status: Type.Union(SESSION_STATUSES.map((s) => Type.Literal(s))),
    share_url: Nullable(Type.String({ description: 'null while the share link is revoked' })),
    files: Type.Array(StoredFile),
    uploaded_at: IsoDateTime,
    updated_at: IsoDateTime,
    expires_at: IsoDateTime,
    scanned_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: "when the scan ran: the file's metadata.finished_at, else started_at, else the upload time",
      }),
    ),
  }),
]);
export type SessionView = Static<typeof SessionView>;

export const UploadResponse = Type.Object({
  success: Type.Literal(true),
  session_id: Type.String(),
  share_token: Nullable(
    Type.String({
      pattern: SHARE_TOKEN_PATTERN,
      description: 'null when a re-upload replaced a session whose share link was revoked: it stays revoked',
    }),
  ),
  share_url: Nullable(Type.String()),
  message: Type.String(),
  findings: Type.Optional(
    Type.Object(
      {
        new: Type.Integer(),
        persistent: Type.Integer(),
        reopened: Type.Integer(),
        resolved: Type.Integer(),
        not_checked: Type.Integer(),
      },
      { description: 'what this upload did to the findings of record of its target (docs/findings-of-record.md)' },
    ),
  ),
});
export type UploadResponse = Static<typeof UploadResponse>;

/**
 * docs/api.md#ids-are-per-client: the client a session id is looked up under. Session ids are unique per client; a
 * caller that may see several clients names one when the id exists under more than one
 * (otherwise 409). Empty: the sessions uploaded without a client (shown as client_id null).
 */
export const SessionClientId = Type.String({
  maxLength: 128,
  pattern: '^(?:[A-Za-z0-9][A-Za-z0-9_.:@-]*)?$',
  description:
    'client the session belongs to, needed when the id exists under several clients the caller may see (409 otherwise); empty: sessions uploaded without a client',
});

export const RefreshQuery = Type.Object({
  session: Type.Optional(Type.String()),
  file: Type.Optional(Type.String()),
  client_id: Type.Optional(SessionClientId),
});
export const RefreshResponse = Type.Object({
  success: Type.Literal(true),
  session_id: Type.String(),
  file: Type.String(),
  message: Type.String(),
});

export const ClientIdFilter = ClientId;

const SessionStatusSchema = Type.Union(SESSION_STATUSES.map((s) => Type.Literal(s)));

/** Columns the session listing sorts by; `uploaded_at` (newest first) unless asked. */
export const SESSION_SORTS = ['uploaded_at', 'scanned_at', 'target', 'client', 'risk_score', 'status'] as const;
export type SessionSort = (typeof SESSION_SORTS)[number];

/** GET /api/sessions: listing (filters, keyset cursor) or, with `session`, one session's detail. */
export const SessionsQuery = Type.Object(
  {
    session: Type.Optional(Type.String({ maxLength: 256 })),
    client_id: Type.Optional(SessionClientId),
    status: Type.Optional(SessionStatusSchema),
    target: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'exact target' })),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'part of the target, client name or client id, in any case',
      }),
    ),
    sort: Type.Optional(
      Type.Union(
        SESSION_SORTS.map((s) => Type.Literal(s)),
        { description: 'listing order; status sorts in review order (new, in review, resolved, archived)' },
      ),
    ),
    order: Type.Optional(
      Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'sort direction, desc unless asked' }),
    ),
    uploaded_from: Type.Optional(
      Type.String({ format: 'date-time', description: 'only sessions uploaded at or after this instant' }),
    ),
    uploaded_to: Type.Optional(
      Type.String({ format: 'date-time', description: 'only sessions uploaded at or before this instant' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(
      Type.String({
        maxLength: 2048,
        description: 'next_cursor of the previous page, same sort; any other cursor is a 400 (docs/api.md#cursors)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type SessionsQuery = Static<typeof SessionsQuery>;

export const SessionListResponse = Type.Object({
  sessions: Type.Array(SessionView),
  next_cursor: Nullable(Type.String()),
  total: Type.Integer({ minimum: 0, description: 'sessions matching the filters, over every page' }),
});

/** GET /api/sessions/clients: the clients of the sessions the caller may see, for a client picker. */
export const SessionClientsResponse = Type.Object({
  clients: Type.Array(
    Type.Object({
      client_id: Nullable(Type.String({ description: 'null: sessions uploaded without a client' })),
      client: Nullable(Type.String({ description: "the newest session's client name" })),
      sessions: Type.Integer({ minimum: 0 }),
    }),
  ),
});
export type SessionClientsResponse = Static<typeof SessionClientsResponse>;

export const StatusChange = Type.Object({
  from_status: Nullable(Type.String()),
  to_status: Type.String(),
  changed_by: Type.String(),
  note: Nullable(Type.String()),
  changed_at: IsoDateTime,
});
export const SessionNote = Type.Object({ author: Type.String(), note: Type.String(), created_at: IsoDateTime });

export const SessionDetailResponse = Type.Object({
  session: SessionView,
  status_history: Type.Array(StatusChange),
  notes: Type.Array(SessionNote),
});

export const SessionQuery = Type.Object(
  { session: Type.Optional(Type.String({ maxLength: 256 })), client_id: Type.Optional(SessionClientId) },
  { additionalProperties: false },
);

/** 409 body when a session id names sessions of several clients the caller may see (docs/api.md#ids-are-per-client). */
export const AmbiguousSessionBody = Type.Object(
  {
    error: Type.String(),
    client_ids: Type.Array(Nullable(Type.String()), {
      description: "the clients (in the caller's scope) that have a session with this id; null: no client",
    }),
  },
  {
    description:
      'The session id exists under several clients the caller may see: repeat the request with client_id (docs/api.md#ids-are-per-client)',
  },
);

/** POST /api/sessions/share: a new share token; the previous one stops working at once. */
export const RotateShareResponse = Type.Object({
  success: Type.Literal(true),
  session_id: Type.String(),
  client_id: Nullable(Type.String()),
  share_token: Type.String({ pattern: SHARE_TOKEN_PATTERN }),
  share_url: Type.String(),
});
export type RotateShareResponse = Static<typeof RotateShareResponse>;

/** DELETE /api/sessions/share: the session has no share link until the next rotation (or re-upload). */
export const RevokeShareResponse = Type.Object({
  success: Type.Literal(true),
  session_id: Type.String(),
  client_id: Nullable(Type.String()),
  revoked: Type.Boolean({ description: 'false when the session had no share link' }),
});
export type RevokeShareResponse = Static<typeof RevokeShareResponse>;

export const UpdateSessionBody = Type.Object(
  { status: SessionStatusSchema, note: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000 })) },
  { additionalProperties: false },
);
export type UpdateSessionBody = Static<typeof UpdateSessionBody>;

export const UpdateSessionResponse = Type.Object({
  success: Type.Literal(true),
  session_id: Type.String(),
  previous_status: SessionStatusSchema,
  status: SessionStatusSchema,
  changed: Type.Boolean({ description: 'false when the session already had this status (a note is still recorded)' }),
  changed_at: IsoDateTime,
});

export const DeleteSessionResponse = Type.Object({ success: Type.Literal(true), session_id: Type.String() });

// ---- Download, share, refresh and benchmark (docs/api.md#sessions) ----

/** GET /api/download: `file` defaults to session_results.json; `token` is a share token (docs/api.md#sessions). */
export const DownloadQuery = Type.Object({
  session: Type.Optional(Type.String({ maxLength: 256 })),
  file: Type.Optional(
    Type.String({ maxLength: 64, description: `one of ${SESSION_FILES.join(', ')} (default session_results.json)` }),
  ),
  mode: Type.Optional(Type.String({ maxLength: 16, description: '`view`: inline; `download` or absent: attachment' })),
  token: Type.Optional(
    Type.String({ maxLength: 128, description: 'share token of this session (instead of a key or JWT)' }),
  ),
  client_id: Type.Optional(SessionClientId),
  as_uploaded: Type.Optional(
    Type.String({
      maxLength: 8,
      description:
        '`true`: session_results.json exactly as uploaded (the evidence), without the current triage the portal states in it',
    }),
  ),
});
export type DownloadQuery = Static<typeof DownloadQuery>;

/** GET /api/share and the share page /share/ take the share token. */
export const ShareQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 128 })) });
export type ShareQuery = Static<typeof ShareQuery>;

/** GET /api/share: what a share-token holder may see of its one session (docs/api.md#sessions). */
export const ShareResponse = Type.Composite([
  Type.Pick(SessionMetadata, [
    'session_id',
    'client',
    'target',
    'risk_score',
    'risk_grade',
    'total_findings',
    'total_hosts',
    'severity_summary',
    'has_exec_summary',
  ]),
  Type.Object({
    uploaded_at: IsoDateTime,
    expires_at: IsoDateTime,
    files: Type.Array(Type.Union(SESSION_FILES.map((f) => Type.Literal(f))), {
      description: 'stored file names, downloadable with ?token=',
    }),
    risk_score_operational: Type.Optional(Nullable(Type.Number())),
    risk_grade_operational: Type.Optional(Nullable(Type.String())),
    triage_as_of: Type.Optional(
      Type.String({ description: 'the scores are those of the triage on this day (docs/findings-of-record.md)' }),
    ),
    triage_changed_since_report: Type.Optional(
      Nullable(
        Type.String({
          description: 'when a finding of the session last changed after its report was stored; null: not since',
        }),
      ),
    ),
  }),
]);
export type ShareResponse = Static<typeof ShareResponse>;

export type RefreshQuery = Static<typeof RefreshQuery>;
export type RefreshResponse = Static<typeof RefreshResponse>;

export const BENCHMARK_METRICS = ['risk_score', 'findings_per_host', 'critical_high_ratio'] as const;
export type BenchmarkMetricName = (typeof BENCHMARK_METRICS)[number];
export const BENCHMARK_LABELS = [
  'Top 10%',
  'Above average',
  'Average',
  'Below average',
  'Bottom 10%',
  'No peers',
  'Not enough peers',
  'No data',
] as const;
export type BenchmarkLabel = (typeof BENCHMARK_LABELS)[number];

export const BenchmarkMetric = Type.Object({
  value: Nullable(
    Type.Number({
      description: "this session's value; null when the session lacks the input (no risk score, no hosts)",
    }),
  ),
  percentile: Type.Integer({
    minimum: 0,
    maximum: 100,
    description: 'share of peers doing worse (ties count half); 50 when there is no comparison',
  }),
  label: Type.Union(BENCHMARK_LABELS.map((l) => Type.Literal(l))),
  direction: Type.Literal('lower_is_better'),
  sample_size: Type.Integer({ minimum: 0, description: 'peers that have this metric' }),
});
export type BenchmarkMetric = Static<typeof BenchmarkMetric>;

/** GET /api/benchmark (docs/api.md#sessions): percentiles against the latest session of every other client/target pair. */
export const BenchmarkResponse = Type.Object({
  session_id: Type.String(),
  sample_size: Type.Integer({ minimum: 0, description: 'other client/target pairs compared against' }),
  min_sample_size: Type.Integer({ description: 'peers a metric needs before a percentile is given' }),
  fetched_at: IsoDateTime,
  metrics: Type.Object({
    risk_score: BenchmarkMetric,
    findings_per_host: BenchmarkMetric,
    critical_high_ratio: BenchmarkMetric,
  }),
});
export type BenchmarkResponse = Static<typeof BenchmarkResponse>;
