import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { IsoDateTime } from './common.ts';
import type { RecordFilter } from './records.ts';
import { SessionId } from './session-id.ts';

/**
 * GET /api/overview/posture: per client and per target, the counts an MSP starts the day with,
 * from the findings of record. Each count is defined here as a portfolio filter (GET
 * /api/findings, the console's /console/findings), so the portal counts exactly what the
 * console's link to it lists.
 */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** Still to act on: open, not a false positive, no exception in effect (an expired one counts). */
const ACTIONABLE = { status: 'open', exception: 'none,expired', disposition: 'none' } as const;

export const POSTURE_COUNTS = ['critical', 'high', 'overdue', 'kev'] as const;
export type PostureCount = (typeof POSTURE_COUNTS)[number];

/** The portfolio filter each count is the size of (within one client, or one client's target). */
export const POSTURE_FILTERS: Record<PostureCount, RecordFilter> = {
  critical: { severity: 'critical', ...ACTIONABLE },
  high: { severity: 'high', ...ACTIONABLE },
  // Overdue already means open, not a false positive and no exception in effect.
  overdue: { overdue: 'true' },
  kev: { kev: 'true', ...ACTIONABLE },
};

/** Scored scans per target the trend shows at most, the newest last. */
export const POSTURE_TREND_POINTS = 10;

const Counts = {
  critical: Type.Integer({ minimum: 0, description: 'open critical findings without an exception in effect' }),
  high: Type.Integer({ minimum: 0, description: 'open high findings without an exception in effect' }),
  overdue: Type.Integer({ minimum: 0, description: 'open findings past their due date' }),
  kev: Type.Integer({ minimum: 0, description: 'open findings on the CISA KEV list without an exception in effect' }),
};

const LastScan = Nullable(
  Type.Object({
    session_id: SessionId,
    scanned_at: IsoDateTime,
  }),
);

const TrendPoint = Type.Object({
  session_id: SessionId,
  scanned_at: IsoDateTime,
  risk_score: Type.Number(),
  risk_grade: Nullable(Type.String()),
});

export const PostureTarget = Type.Object({
  target: Type.String(),
  ...Counts,
  last_scan: LastScan,
  trend: Type.Array(TrendPoint, {
    description: `this target's scored scans only, oldest first, at most ${POSTURE_TREND_POINTS}`,
  }),
});
export type PostureTarget = Static<typeof PostureTarget>;

export const PostureClient = Type.Object({
  client_id: Type.String(),
  client: Nullable(Type.String({ description: 'the name its newest session gives' })),
  ...Counts,
  last_scan: LastScan,
  stale_agents: Nullable(
    Type.Integer({ minimum: 0, description: 'registered agents not heard from; null without health:agents' }),
  ),
  targets: Type.Array(PostureTarget, { description: 'most open criticals first' }),
});
export type PostureClient = Static<typeof PostureClient>;

export const PostureResponse = Type.Object({
  today: Type.String({ description: 'the day (UTC) due dates and exception expiries are read against' }),
  stale_threshold_seconds: Type.Integer(),
  clients: Type.Array(PostureClient, { description: 'most open criticals first, then by client id' }),
});
export type PostureResponse = Static<typeof PostureResponse>;
