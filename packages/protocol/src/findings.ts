import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ClientId, IsoDateTime } from './common.ts';
import { SessionId } from './session-id.ts';
import type { Orc964Block, Topology } from './session-file/schema.ts';
import { REMEDIATION_STATUSES, SessionClientId, SEVERITIES } from './sessions.ts';

/**
 * GET /api/sessions/{session_id}/findings: one session's findings a page at a time, from the
 * portal's findings index (docs/decisions.md, "Console for daily triage: findings at scale").
 */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const FINDING_SORTS = ['severity', 'host', 'port', 'cve', 'cvss', 'status', 'first_seen'] as const;
export type FindingSort = (typeof FINDING_SORTS)[number];
/** Remediation statuses plus `untracked`: a finding without a remediation entry. */
export const FINDING_STATUS_FILTERS = [...REMEDIATION_STATUSES, 'untracked'] as const;
export type FindingStatusFilter = (typeof FINDING_STATUS_FILTERS)[number];
export const EXCEPTION_FILTERS = ['active', 'expired', 'none'] as const;
export type ExceptionFilter = (typeof EXCEPTION_FILTERS)[number];
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
    kev: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], {
        description: 'true: only known-exploited findings; false: only the others',
      }),
    ),
    host: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'part of the host address or name (any case)' }),
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
    cursor: Type.Optional(Type.String({ maxLength: 1024, description: 'next_cursor of the previous page' })),
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
});
export type FindingException = Static<typeof FindingException>;

export const FindingRow = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'position in the stored findings[]; the detail is fetched by it' }),
  fingerprint: Nullable(Type.String({ pattern: '^[0-9a-f]{64}$' })),
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
});
export type FindingRow = Static<typeof FindingRow>;

export const FindingsResponse = Type.Object({
  session_id: SessionId,
  client_id: Nullable(ClientId),
  total: Type.Integer({ minimum: 0, description: 'findings matching the filters, over every page' }),
  findings: Type.Array(FindingRow),
  next_cursor: Nullable(Type.String()),
});
export type FindingsResponse = Static<typeof FindingsResponse>;

export const FindingDetailQuery = Type.Object(
  { client_id: Type.Optional(SessionClientId) },
  { additionalProperties: false },
);

export const FindingHistoryEntry = Type.Object({
  at: IsoDateTime,
  actor: Type.String(),
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
      description: 'remediation updates of this finding recorded in the audit log, oldest first',
    }),
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
