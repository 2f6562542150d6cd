import {
  OVERVIEW_DEFAULT_DAYS,
  OVERVIEW_RISK_POINTS,
  OVERVIEW_RISK_TARGETS,
  type OverviewResponse,
  STALE_THRESHOLD_SECONDS,
} from '@svc/protocol';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { clientIdOut } from '../sessions/present.ts';
import { EXPIRY_NOTICE_DAYS } from '../sessions/retention.ts';
import { expiringSessions, fleetCounts, riskPoints, topOpenFindings } from './queries.ts';

const DAY_MS = 86_400_000;
const LIST_LENGTH = 10;

/**
 * The console's first page, within the user's clients: risk by scan time per target over
 * `days` (the highest-scoring targets, and how many there are), the fleet's states (only for
 * users who may see the fleet), the sessions expiring within the retention notice window, and
 * the most frequent open findings.
 */
export async function overviewFor(ctx: AppContext, user: UserPrincipal, days?: number): Promise<OverviewResponse> {
  const span = days ?? OVERVIEW_DEFAULT_DAYS;
  const now = ctx.now();
  const scope = user.clientIds;
  if (scope !== null && scope.length === 0) {
    return {
      days: span,
      risk: [],
      risk_targets: 0,
      fleet: null,
      expiring: { within_days: EXPIRY_NOTICE_DAYS, total: 0, sessions: [] },
      top_findings: [],
    };
  }
  const seesFleet = user.permissions.has('health:agents');
  // A heartbeat counts as stale once its age in whole seconds passes the threshold (agents/present.ts).
  const staleBefore = new Date(now.getTime() - (STALE_THRESHOLD_SECONDS + 1) * 1000);
  const [points, fleet, expiring, top] = await Promise.all([
    riskPoints(ctx.db, scope, new Date(now.getTime() - span * DAY_MS), OVERVIEW_RISK_TARGETS, OVERVIEW_RISK_POINTS),
    seesFleet ? fleetCounts(ctx.db, scope, staleBefore) : null,
    expiringSessions(ctx.db, scope, now, new Date(now.getTime() + EXPIRY_NOTICE_DAYS * DAY_MS), LIST_LENGTH),
    topOpenFindings(ctx.db, scope, LIST_LENGTH, now.toISOString().slice(0, 10)),
  ]);

  const risk: OverviewResponse['risk'] = [];
  for (const p of points) {
    let series = risk.at(-1);
    // One series per target: a client's targets in one line would draw a sawtooth between them.
    if (series === undefined || series.client_id !== clientIdOut(p.client_id) || series.target !== p.target) {
      series = { client_id: clientIdOut(p.client_id), client: null, target: p.target, points: [] };
      risk.push(series);
    }
    // Rows come oldest first: the last name seen is the newest.
    if (p.client !== null) series.client = p.client;
    series.points.push({
      session_id: p.session_id,
      target: p.target,
      scanned_at: p.scanned_at.toISOString(),
      risk_score: p.risk_score,
      risk_grade: p.risk_grade,
    });
  }

  return {
    days: span,
    risk,
    risk_targets: Number(points[0]?.total ?? 0),
    fleet: fleet === null ? null : { ...fleet, stale_threshold_seconds: STALE_THRESHOLD_SECONDS },
    expiring: {
      within_days: EXPIRY_NOTICE_DAYS,
      total: expiring.total,
      sessions: expiring.rows.map((r) => ({
        session_id: r.session_id,
        client_id: clientIdOut(r.client_id),
        client: r.client,
        target: r.target,
        expires_at: r.expires_at.toISOString(),
        days_remaining: Math.max(0, Math.ceil((r.expires_at.getTime() - now.getTime()) / DAY_MS)),
      })),
    },
    top_findings: top,
  };
}
