import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ClientId, IsoDateTime } from './common.ts';
import { Fingerprint } from './session-file/fingerprint-shape.ts';
import { SessionId } from './session-id.ts';
import type { Orc964Block, Topology } from './session-file/schema.ts';
import { DECISION_SOURCES, DISPOSITIONS, REMEDIATION_STATUSES, SessionClientId, SEVERITIES } from './sessions.ts';

/**
 * GET /api/sessions/{session_id}/findings: one session's findings a page at a time, from the
 * portal's findings index (docs/decisions.md#findings-indexed-per-session-in-postgresql).
 */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const FINDING_SORTS = ['severity', 'host', 'port', 'cve', 'cvss', 'status', 'first_seen'] as const;
export type FindingSort = (typeof FINDING_SORTS)[number];
/** Remediation statuses plus `untracked`: a finding without a remediation entry. */
export const FINDING_STATUS_FILTERS = [...REMEDIATION_STATUSES, 'untracked'] as const;
export type FindingStatusFilter = (typeof FINDING_STATUS_FILTERS)[number];
export const EXCEPTION_FILTERS = ['active', 'expired', 'none'] as const;
export type ExceptionFilter = (typeof EXCEPTION_FILTERS)[number];
/** What a session did to a finding of record (docs/findings-of-record.md#what-changed). */
export const FINDING_CHANGES = ['new', 'persistent', 'reopened', 'resolved', 'not_checked'] as const;
export type FindingChange = (typeof FINDING_CHANGES)[number];
export const DISPOSITION_FILTERS = [...DISPOSITIONS, 'none'] as const;
export const FINDINGS_PAGE_MAX = 200;
export const FINDINGS_PAGE_DEFAULT = 50;

const list = (values: readonly string[], what: string) =>
  Type.String({
    maxLength: 256,
    description: `${what}: one or more of ${values.join(', ')}, separated by commas`,
  });

export const FindingsQuery = Type.Object(
  {
    client_id: Type.Optional(SessionClientId),
    severity: Type.Optional(list(SEVERITIES, 'severities')),
    status: Type.Optional(list(FINDING_STATUS_FILTERS, 'remediation statuses')),
    exception: Type.Optional(list(EXCEPTION_FILTERS, 'risk exception states')),
    change: Type.Optional(list(FINDING_CHANGES, 'what this session did to the finding')),
    disposition: Type.Optional(list(DISPOSITION_FILTERS, 'dispositions')),
    overdue: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
    kev: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], {
        description: 'true: only known-exploited findings; false: only the others',
      }),
    ),
    host: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'a whole IP address matches that address only; anything else the hosts whose address or name starts with it (any case)',
      }),
    ),
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    cve: Type.Optional(Type.String({ pattern: '^[Cc][Vv][Ee]-\\d{4}-\\d{4,}$', maxLength: 32 })),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'text in the title, host, host name, CVE ids, rule id or service (any case)',
      }),
    ),
    sort: Type.Optional(Type.Union(FINDING_SORTS.map((s) => Type.Literal(s)))),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: FINDINGS_PAGE_MAX, default: FINDINGS_PAGE_DEFAULT })),
    cursor: Type.Optional(
      Type.String({
        maxLength: 1024,
        description:
          'next_cursor of the previous page, same sort and order; any other cursor is a 400 (docs/api.md#cursors)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type FindingsQuery = Static<typeof FindingsQuery>;

export const FindingException = Type.Object({
  state: Type.Union([Type.Literal('active'), Type.Literal('expired')], {
    description: 'active: accepted and not past its expiry today; expired otherwise',
  }),
  reason: Nullable(Type.String()),
  approver: Nullable(Type.String()),
  approved_at: Nullable(Type.String()),
  expiry: Nullable(Type.String({ description: 'last valid day, YYYY-MM-DD' })),
  source: Type.Optional(
    Type.Union(
      DECISION_SOURCES.map((s) => Type.Literal(s)),
      { description: 'person: accepted in the console or API; upload: set by an uploaded file (approver: its key)' },
    ),
  ),
  claimed_approver: Type.Optional(Nullable(Type.String({ description: 'the approver an uploaded file named' }))),
});
export type FindingException = Static<typeof FindingException>;

export const FindingRow = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'position in the stored findings[]; the detail is fetched by it' }),
  fingerprint: Nullable(Fingerprint),
  title: Type.String(),
  severity: Nullable(Type.Union(SEVERITIES.map((s) => Type.Literal(s)))),
  cvss: Nullable(Type.Number()),
  cve_ids: Type.Array(Type.String()),
  kev: Type.Boolean({ description: "a CVE it names is in CISA's Known Exploited Vulnerabilities catalogue" }),
  kev_date_added: Nullable(Type.String({ description: 'when the catalogue added it, YYYY-MM-DD' })),
  epss: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'EPSS probability of exploitation in 30 days' })),
  epss_percentile: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
  host: Nullable(Type.String()),
  hostname: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  protocol: Nullable(Type.String()),
  status: Nullable(
    Type.Union(
      REMEDIATION_STATUSES.map((s) => Type.Literal(s)),
      { description: 'null: untracked' },
    ),
  ),
  tracked_by: Nullable(
    Type.Union([Type.Literal('fingerprint'), Type.Literal('title')], {
      description:
        'how PATCH /api/remediation-update reaches the entry: by fingerprint (this finding only) or by title (every entry of the title, older files)',
    }),
  ),
  first_seen: Nullable(Type.String({ description: 'session id where the finding first appeared' })),
  status_changed: Nullable(Type.String()),
  note: Type.String(),
  exception: Nullable(FindingException),
  // Findings of record (docs/findings-of-record.md).
  in_scan: Type.Optional(
    Type.Boolean({
      description:
        'false for a finding of record this session did not report: resolved by it (it looked there) or not checked by it',
    }),
  ),
  change: Type.Optional(Nullable(Type.Union(FINDING_CHANGES.map((c) => Type.Literal(c))))),
  status_source: Type.Optional(Nullable(Type.Union(DECISION_SOURCES.map((s) => Type.Literal(s))))),
  disposition: Type.Optional(
    Nullable(
      Type.Object({
        disposition: Type.Union(DISPOSITIONS.map((d) => Type.Literal(d))),
        reason: Type.String(),
        by: Type.String(),
        at: Type.String(),
      }),
    ),
  ),
  last_seen: Type.Optional(Nullable(Type.String())),
  resolved_at: Type.Optional(Nullable(Type.String())),
  reopened_at: Type.Optional(Nullable(Type.String())),
  due_date: Type.Optional(Nullable(Type.String({ description: 'YYYY-MM-DD' }))),
  overdue: Type.Optional(Type.Boolean()),
});
export type FindingRow = Static<typeof FindingRow>;

export const FindingsResponse = Type.Object({
  session_id: SessionId,
  client_id: Nullable(ClientId),
  total: Type.Integer({ minimum: 0, description: 'findings matching the filters, over every page' }),
  findings: Type.Array(FindingRow),
  next_cursor: Nullable(Type.String()),
  changes: Type.Optional(
    Type.Object(
      Object.fromEntries(FINDING_CHANGES.map((c) => [c, Type.Integer()])) as Record<
        FindingChange,
        ReturnType<typeof Type.Integer>
      >,
      { description: 'what this session did to the findings of record of its target, over every page' },
    ),
  ),
  overdue: Type.Optional(Type.Integer({ description: 'open findings of this session past their due date' })),
});
export type FindingsResponse = Static<typeof FindingsResponse>;

export const FindingDetailQuery = Type.Object(
  { client_id: Type.Optional(SessionClientId) },
  { additionalProperties: false },
);

export const FindingHistoryEntry = Type.Object({
  at: IsoDateTime,
  actor: Type.String(),
  source: Type.Optional(Type.Union(DECISION_SOURCES.map((s) => Type.Literal(s)))),
  session_id: Type.Optional(Nullable(Type.String({ description: 'the session the change came with, if any' }))),
  field: Type.Optional(
    Type.Union(
      ['status', 'note', 'exception', 'disposition', 'claim'].map((f) => Type.Literal(f)),
      { description: 'what changed; claim: what an uploaded file asked for and was not applied' },
    ),
  ),
  from: Type.Optional(Nullable(Type.String())),
  to: Type.Optional(Nullable(Type.String())),
  detail: Type.Optional(Nullable(Type.String({ description: 'reason, expiry or why a claim was not applied' }))),
  status: Nullable(Type.String()),
  exception: Nullable(
    Type.Object({
      action: Type.String(),
      reason: Nullable(Type.String()),
      expiry: Nullable(Type.String()),
    }),
  ),
});
export type FindingHistoryEntry = Static<typeof FindingHistoryEntry>;

export const FindingDetailResponse = Type.Composite([
  FindingRow,
  Type.Object({
    rule_id: Nullable(Type.String()),
    service: Nullable(Type.String()),
    evidence: Nullable(Type.String()),
    description: Nullable(Type.String()),
    remediation: Nullable(Type.String()),
    references: Type.Object({
      cve: Type.Array(Type.String()),
      cwe: Type.Array(Type.String()),
      urls: Type.Array(Type.String()),
    }),
    prior_status: Nullable(Type.String()),
    history: Type.Array(FindingHistoryEntry, {
      description:
        'the history of this finding of record, oldest first: every status, note, exception and disposition change',
    }),
    seen_in: Type.Optional(Type.Array(Type.String(), { description: 'sessions it was seen in, newest first' })),
  }),
]);
export type FindingDetailResponse = Static<typeof FindingDetailResponse>;

/** GET /api/sessions/{session_id}/blocks: the file's blocks the session view draws besides findings. */
/** Served as stored: typed for the console, described openly so that no stored value fails serialisation. */
const openBlock = <T>(description: string) =>
  Nullable(Type.Unsafe<T>(Type.Object({}, { additionalProperties: true, description })));
export const SessionBlocksResponse = Type.Object({
  topology: openBlock<Static<typeof Topology>>("the file's topology block as stored; null when it has none"),
  orc_964: openBlock<Static<typeof Orc964Block>>("the file's orc_964 block as stored; null when it has none"),
});
export type SessionBlocksResponse = Static<typeof SessionBlocksResponse>;
