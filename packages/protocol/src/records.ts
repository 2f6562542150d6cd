import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ClientId, IsoDateTime } from './common.ts';
import { CoverageBlock } from './session-file/coverage.ts';
import { Fingerprint } from './session-file/fingerprint-shape.ts';
import { EXCEPTION_REASON_MAX_LENGTH } from './remediation-update.ts';
import {
  DECISION_SOURCES,
  DISPOSITIONS,
  REMEDIATION_STATUSES,
  SessionClientId,
  SEVERITIES,
  type Severity,
} from './sessions.ts';

/**
 * Findings of record (docs/findings-of-record.md): the portal keeps one record per finding of a
 * client's target, by fingerprint, with the decisions people made on it; sessions stay the
 * evidence of each scan. These are the API's shapes for the records across a caller's scope,
 * the bulk change, the due-date settings and the targets.
 */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));
const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' });

/** Days from first seen (or reopened) to due, per severity; null: no due date. */
const days = (s: Severity) => Nullable(Type.Integer({ minimum: 1, maximum: 3650, description: `${s} findings` }));
export const DueDays = Type.Object(
  { critical: days('critical'), high: days('high'), medium: days('medium'), low: days('low'), info: days('info') },
  { additionalProperties: false, description: 'Days to remediate, per severity (null: no due date)' },
);
export type DueDays = Static<typeof DueDays>;

/**
 * The defaults (docs/findings-of-record.md#due-dates): 15 days for critical and 30 for high,
 * as CISA's BOD 19-02 asks of internet-facing systems; 90 for medium and 180 for low, the
 * usual quarterly and half-yearly cycles; informational findings are never due.
 */
export const DEFAULT_DUE_DAYS: DueDays = { critical: 15, high: 30, medium: 90, low: 180, info: null };

/** The due day (YYYY-MM-DD) of a finding first seen (or reopened) on `since`, or null. */
export function dueDateOf(since: Date, severity: Severity | null, days: DueDays): string | null {
  const n = severity === null ? null : days[severity];
  if (n === null) return null;
  return new Date(since.getTime() + n * 86_400_000).toISOString().slice(0, 10);
}

export const RecordException = Type.Object({
  state: Type.Union([Type.Literal('accepted'), Type.Literal('expired')], {
    description: 'accepted while its expiry day has not passed (UTC); expired from the next day',
  }),
  reason: Type.String(),
  approver: Type.String({
    description: 'the person who accepted it; for an exception an uploaded file set, the key that uploaded it',
  }),
  approved_at: Nullable(Type.String()),
  expiry: Nullable(Day),
  source: literals(DECISION_SOURCES),
  claimed_approver: Nullable(Type.String({ description: 'the approver an uploaded file named (never an approval)' })),
});
export type RecordException = Static<typeof RecordException>;

export const RecordDisposition = Type.Object({
  disposition: literals(DISPOSITIONS),
  reason: Type.String(),
  by: Type.String(),
  at: IsoDateTime,
  source: literals(DECISION_SOURCES),
});
export type RecordDisposition = Static<typeof RecordDisposition>;

/** One finding of record. */
export const RecordFinding = Type.Object({
  client_id: Nullable(ClientId),
  target: Type.String(),
  fingerprint: Fingerprint,
  title: Type.String(),
  severity: Nullable(literals(SEVERITIES)),
  rule_id: Nullable(Type.String()),
  host: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  protocol: Nullable(Type.String()),
  cve_ids: Type.Array(Type.String()),
  kev: Type.Boolean(),
  epss: Nullable(Type.Number()),
  status: literals(REMEDIATION_STATUSES),
  status_changed: Nullable(IsoDateTime),
  status_source: literals(DECISION_SOURCES),
  status_by: Nullable(Type.String()),
  note: Type.String(),
  exception: Nullable(RecordException),
  disposition: Nullable(RecordDisposition),
  first_seen: Type.String({ description: 'session id where the finding first appeared' }),
  first_seen_at: IsoDateTime,
  last_seen: Type.String({ description: 'session id where it was last seen' }),
  last_seen_at: IsoDateTime,
  resolved_at: Nullable(IsoDateTime),
  resolved_in: Nullable(Type.String({ description: 'session that no longer found it, while looking where it was' })),
  reopened_at: Nullable(IsoDateTime),
  not_checked_in: Nullable(
    Type.String({ description: 'the latest session that did not look where it is (it stays open); null once one did' }),
  ),
  due_date: Nullable(Day),
  overdue: Type.Boolean({
    description:
      'open, not a false positive, no exception that holds, and past its due date (deferred counts: deferring is not accepting)',
  }),
  seen_in: Type.Array(Type.String(), { description: 'the sessions it was seen in, newest first (at most 50)' }),
  seen_count: Type.Integer({ minimum: 0, description: 'how many sessions it was seen in' }),
});
export type RecordFinding = Static<typeof RecordFinding>;

export const RECORD_STATUS_FILTERS = [...REMEDIATION_STATUSES, 'open'] as const;
export const RECORD_EXCEPTION_FILTERS = ['accepted', 'expired', 'none'] as const;
export const RECORD_DISPOSITION_FILTERS = [...DISPOSITIONS, 'none'] as const;
export const RECORDS_PAGE_MAX = 500;
export const RECORDS_PAGE_DEFAULT = 100;
/**
 * The orders of GET /api/findings (`sort`). Each ends on the record id, so a keyset cursor is
 * exact; records without the key (no due date, no EPSS, no host) come last. `severity` is the
 * default: most severe first, then the longest known.
 */
export const RECORD_SORTS = [
  'severity',
  'first_seen_desc',
  'first_seen_asc',
  'due_date_asc',
  'epss_desc',
  'host_asc',
] as const;
export type RecordSort = (typeof RECORD_SORTS)[number];
export const RECORD_SORT_DEFAULT: RecordSort = 'severity';

const list = (values: readonly string[], what: string) =>
  Type.String({ maxLength: 512, description: `${what}: one or more of ${values.join(', ')}, separated by commas` });

/** The filters of GET /api/findings, also a bulk change's selection. */
export const RecordFilter = Type.Object(
  {
    client_id: Type.Optional(
      Type.String({ maxLength: 2048, description: 'client ids separated by commas (default: every client in scope)' }),
    ),
    target: Type.Optional(Type.String({ maxLength: 512, description: 'exact target' })),
    severity: Type.Optional(list(SEVERITIES, 'severities')),
    status: Type.Optional(list(RECORD_STATUS_FILTERS, 'statuses (open: every status but resolved)')),
    kev: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
    epss_min: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'EPSS probability at least this (0 to 1); no EPSS: left out',
      }),
    ),
    exception: Type.Optional(list(RECORD_EXCEPTION_FILTERS, 'exception states')),
    disposition: Type.Optional(list(RECORD_DISPOSITION_FILTERS, 'dispositions')),
    first_seen_from: Type.Optional(Type.String({ format: 'date-time', description: 'first seen at or after' })),
    first_seen_to: Type.Optional(Type.String({ format: 'date-time', description: 'first seen before' })),
    overdue: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
    due_before: Type.Optional(
      Type.String({
        pattern: '^\\d{4}-\\d{2}-\\d{2}$',
        description: 'due on or before this day (YYYY-MM-DD, UTC); no due date: left out',
      }),
    ),
    host: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'a whole IP address matches that address only; anything else (a name, the start of an address) the hosts starting with it',
      }),
    ),
    host_prefix: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, description: 'hosts starting with this text (e.g. 10.0.3.)' }),
    ),
  },
  { additionalProperties: false },
);
export type RecordFilter = Static<typeof RecordFilter>;

export const RecordsQuery = Type.Composite(
  [
    RecordFilter,
    Type.Object({
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: RECORDS_PAGE_MAX, default: RECORDS_PAGE_DEFAULT })),
      sort: Type.Optional(
        Type.Union(
          RECORD_SORTS.map((v) => Type.Literal(v)),
          {
            description:
              'severity: most severe first, then the longest known; first_seen_desc / first_seen_asc: newest / oldest first; due_date_asc: soonest due first; epss_desc: highest EPSS first; host_asc: host A to Z. Records without the key come last; ties by record id',
          },
        ),
      ),
      cursor: Type.Optional(
        Type.String({
          maxLength: 1024,
          description:
            'next_cursor of the previous page with the same sort; any other cursor is a 400 (docs/api.md#cursors)',
        }),
      ),
    }),
  ],
  { additionalProperties: false },
);
export type RecordsQuery = Static<typeof RecordsQuery>;

export const RecordsResponse = Type.Object({
  findings: Type.Array(RecordFinding, { description: 'in the order `sort` names (default: most severe first)' }),
  next_cursor: Nullable(Type.String()),
});
export type RecordsResponse = Static<typeof RecordsResponse>;

const BySeverityCount = Type.Object(Object.fromEntries(SEVERITIES.map((s) => [s, Type.Integer()])));

export const RecordsSummaryResponse = Type.Object({
  total: Type.Integer(),
  open: Type.Integer(),
  overdue: Type.Integer(),
  by_severity: BySeverityCount,
  by_status: Type.Object(Object.fromEntries(REMEDIATION_STATUSES.map((s) => [s, Type.Integer()]))),
  exceptions: Type.Object({ accepted: Type.Integer(), expired: Type.Integer() }),
  false_positive: Type.Integer(),
});
export type RecordsSummaryResponse = Static<typeof RecordsSummaryResponse>;

/** Most findings a bulk change takes, by fingerprints or by filter. */
export const BULK_MAX_FINDINGS = 10_000;

/**
 * GET /api/findings/count counts what the filters match up to `upto` (at most the bulk limit):
 * it stops reading there, so it stays fast whatever the number of records, and it tells
 * whether "select all matching" can reach them all in one bulk change.
 */
export const RecordsCountQuery = Type.Composite(
  [
    RecordFilter,
    Type.Object({
      upto: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: BULK_MAX_FINDINGS,
          default: BULK_MAX_FINDINGS,
          description: 'count at most this many; more answer `capped: true`',
        }),
      ),
    }),
  ],
  { additionalProperties: false },
);
export type RecordsCountQuery = Static<typeof RecordsCountQuery>;

export const RecordsCountResponse = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'the records matching, or `upto` when capped' }),
  capped: Type.Boolean({ description: 'true: more than `count` match' }),
});
export type RecordsCountResponse = Static<typeof RecordsCountResponse>;

export const BulkChange = Type.Object(
  {
    status: Type.Optional(literals(REMEDIATION_STATUSES)),
    note: Type.Optional(Type.String({ maxLength: 10_000 })),
    exception: Type.Optional(
      Nullable(
        Type.Object(
          {
            reason: Type.String({ maxLength: EXCEPTION_REASON_MAX_LENGTH }),
            expiry: Type.String({ maxLength: 10, description: 'last valid day, YYYY-MM-DD (UTC); today or later' }),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    disposition: Type.Optional(
      Nullable(
        Type.Object(
          {
            disposition: literals(DISPOSITIONS),
            reason: Type.String({ maxLength: EXCEPTION_REASON_MAX_LENGTH, description: 'required, not blank' }),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false, description: 'at least one of status, note, exception and disposition' },
);
export type BulkChange = Static<typeof BulkChange>;

export const BulkBody = Type.Object(
  {
    fingerprints: Type.Optional(Type.Array(Fingerprint, { minItems: 1, maxItems: BULK_MAX_FINDINGS })),
    client_id: Type.Optional(SessionClientId),
    target: Type.Optional(Type.String({ maxLength: 512 })),
    filter: Type.Optional(RecordFilter),
    change: BulkChange,
  },
  {
    additionalProperties: false,
    description:
      'exactly one of fingerprints (with client_id unless the caller sees one client; target narrows) and filter',
  },
);
export type BulkBody = Static<typeof BulkBody>;

export const BulkResponse = Type.Object({
  success: Type.Literal(true),
  matched: Type.Integer({ description: 'findings the selection reached' }),
  changed: Type.Integer({ description: 'findings whose status, note, exception or disposition changed' }),
  unmatched: Type.Array(Type.String(), { description: 'fingerprints that name no finding in scope' }),
});
export type BulkResponse = Static<typeof BulkResponse>;

export const RemediationSettingsQuery = Type.Object(
  { client_id: Type.Optional(SessionClientId) },
  { additionalProperties: false },
);
export const RemediationSettingsBody = Type.Object(
  { client_id: Type.Optional(SessionClientId), due_days: DueDays },
  { additionalProperties: false },
);
export type RemediationSettingsBody = Static<typeof RemediationSettingsBody>;
export const RemediationSettingsResponse = Type.Object({
  client_id: Nullable(ClientId),
  due_days: DueDays,
  defaults: Type.Boolean({ description: 'true while the client has no settings of its own' }),
});
export type RemediationSettingsResponse = Static<typeof RemediationSettingsResponse>;

/** One scanned target of a client with what its latest session looked at. */
export const TargetView = Type.Object({
  client_id: Nullable(ClientId),
  target: Type.String(),
  last_session_id: Nullable(Type.String()),
  last_scanned_at: Nullable(IsoDateTime),
  coverage: Nullable(CoverageBlock),
  open: Type.Integer(),
  resolved: Type.Integer(),
});
export type TargetView = Static<typeof TargetView>;

export const TargetsQuery = Type.Object(
  { client_id: Type.Optional(SessionClientId), target: Type.Optional(Type.String({ maxLength: 512 })) },
  { additionalProperties: false },
);
export const TargetsResponse = Type.Object({ targets: Type.Array(TargetView) });
export type TargetsResponse = Static<typeof TargetsResponse>;

export const PurgeTargetQuery = Type.Object(
  {
    client_id: Type.Optional(SessionClientId),
    target: Type.Optional(
      Type.String({ maxLength: 512, description: 'the target to purge; absent: every target of the client' }),
    ),
  },
  { additionalProperties: false },
);
export const PurgeTargetResponse = Type.Object({
  success: Type.Literal(true),
  sessions_deleted: Type.Integer(),
  records_deleted: Type.Integer(),
});
export type PurgeTargetResponse = Static<typeof PurgeTargetResponse>;
