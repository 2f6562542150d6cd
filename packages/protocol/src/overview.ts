import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { IsoDateTime } from './common.ts';
import { SessionId } from './session-id.ts';
import { SEVERITIES } from './sessions.ts';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const SeveritySchema = Type.Union(SEVERITIES.map((s) => Type.Literal(s)));

/** Open remediation entries of one session that share a title (stored per session, summed by the overview). */
export const OpenFinding = Type.Object({
  title: Type.String(),
  severity: Nullable(SeveritySchema),
  count: Type.Integer({ minimum: 1, description: 'open entries (hosts) with this title' }),
});
export type OpenFinding = Static<typeof OpenFinding>;

/** Days the overview's risk chart looks back unless asked. */
export const OVERVIEW_DEFAULT_DAYS = 90;

/** Targets the overview's risk answers at most: those whose newest scored scan scored highest. */
export const OVERVIEW_RISK_TARGETS = 20;

/** Scans of one target the overview's risk answers at most: its newest (a daily scan over the longest span fits). */
export const OVERVIEW_RISK_POINTS = 400;

export const OverviewQuery = Type.Object(
  {
    days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 365,
        default: OVERVIEW_DEFAULT_DAYS,
        description: 'how far back the risk chart reaches, by scan time',
      }),
    ),
  },
  { additionalProperties: false },
);

const RiskPoint = Type.Object({
  session_id: SessionId,
  target: Nullable(Type.String()),
  scanned_at: IsoDateTime,
  risk_score: Type.Number(),
  risk_grade: Nullable(Type.String()),
});

/** GET /api/overview: the console's first page, within the caller's clients. */
export const OverviewResponse = Type.Object({
  days: Type.Integer(),
  risk: Type.Array(
    Type.Object({
      client_id: Nullable(Type.String({ description: 'null: sessions uploaded without a client' })),
      client: Nullable(Type.String()),
      target: Nullable(Type.String({ description: 'one series per target: the targets of a client are not mixed' })),
      points: Type.Array(RiskPoint, {
        description: `sessions with a risk score, oldest scan first: the target's newest ${OVERVIEW_RISK_POINTS} in the span`,
      }),
    }),
    {
      description: `the ${OVERVIEW_RISK_TARGETS} targets whose newest scored scan in the span scored highest (ties: the newer scan), by client, then target`,
    },
  ),
  risk_targets: Type.Integer({
    minimum: 0,
    description: 'targets with a scored scan in the span: more than `risk` holds when over its limit',
  }),
  fleet: Nullable(
    Type.Object(
      {
        online: Type.Integer({ minimum: 0 }),
        stale: Type.Integer({ minimum: 0 }),
        deregistered: Type.Integer({ minimum: 0 }),
        stale_threshold_seconds: Type.Integer(),
      },
      { description: 'null when the caller may not see the fleet' },
    ),
  ),
  expiring: Type.Object({
    within_days: Type.Integer(),
    total: Type.Integer({ minimum: 0 }),
    sessions: Type.Array(
      Type.Object({
        session_id: SessionId,
        client_id: Nullable(Type.String()),
        client: Nullable(Type.String()),
        target: Nullable(Type.String()),
        expires_at: IsoDateTime,
        days_remaining: Type.Integer({ minimum: 0 }),
      }),
      { description: 'the soonest to expire first, at most 10' },
    ),
  }),
  top_findings: Type.Array(
    Type.Object({
      title: Type.String(),
      severity: Nullable(SeveritySchema),
      targets: Type.Integer({ minimum: 1, description: 'targets whose latest session has it open' }),
      open: Type.Integer({ minimum: 1, description: 'open entries (hosts) over those sessions' }),
    }),
    {
      description:
        'most frequent open findings of record (open, not a false positive, no exception in effect), at most 10',
    },
  ),
});
export type OverviewResponse = Static<typeof OverviewResponse>;
