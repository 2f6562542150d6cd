import {
  POSTURE_COUNTS,
  POSTURE_TREND_POINTS,
  type PostureClient,
  type PostureResponse,
  type PostureTarget,
  STALE_THRESHOLD_SECONDS,
} from '@svc/protocol';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { postureCounts } from '../records/portfolio-queries.ts';
import { clientNames, staleAgentsByClient, targetTrends } from './queries.ts';

type Counts = Pick<PostureTarget, 'critical' | 'high' | 'overdue' | 'kev'>;
type LastScan = PostureTarget['last_scan'];

/** Most open criticals first, then highs, overdue, KEV; then by name. */
function worstFirst<T extends Counts>(name: (x: T) => string) {
  return (a: T, b: T) => {
    for (const k of POSTURE_COUNTS) if (a[k] !== b[k]) return b[k] - a[k];
    return name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0;
  };
}

const newer = (a: LastScan, b: LastScan): LastScan =>
  a === null ? b : b === null ? a : Date.parse(b.scanned_at) > Date.parse(a.scanned_at) ? b : a;

/**
 * The overview's posture (GET /api/overview/posture): per client and per target of the user's
 * scope, the counts of protocol POSTURE_FILTERS from the findings of record, the newest scan,
 * the target's own risk trend, and the client's stale agents (for users who may see the fleet).
 */
export async function postureFor(ctx: AppContext, user: UserPrincipal): Promise<PostureResponse> {
  const now = ctx.now();
  const today = now.toISOString().slice(0, 10);
  const scope = user.clientIds;
  const answer: PostureResponse = { today, stale_threshold_seconds: STALE_THRESHOLD_SECONDS, clients: [] };
  if (scope !== null && scope.length === 0) return answer;
  const seesFleet = user.permissions.has('health:agents');
  // As the fleet counts: stale once the heartbeat's age in whole seconds passes the threshold.
  const staleBefore = new Date(now.getTime() - (STALE_THRESHOLD_SECONDS + 1) * 1000);
  const [targets, stale] = await Promise.all([
    postureCounts(ctx.db, scope, today),
    seesFleet ? staleAgentsByClient(ctx.db, scope, staleBefore) : null,
  ]);
  // Names and trends of the clients and targets answered only, not of every session in scope.
  const listed = new Set([...targets.map((t) => t.client_id), ...[...(stale?.keys() ?? [])].filter((c) => c !== '')]);
  const [names, trends] = await Promise.all([
    clientNames(ctx.db, [...listed]),
    targetTrends(ctx.db, targets, POSTURE_TREND_POINTS),
  ]);

  const trendOf = new Map<string, PostureTarget['trend']>();
  for (const p of trends) {
    const key = `${p.client_id}\u0000${p.target}`;
    const list = trendOf.get(key) ?? [];
    list.push({
      session_id: p.session_id,
      scanned_at: p.scanned_at.toISOString(),
      risk_score: p.risk_score,
      risk_grade: p.risk_grade,
    });
    trendOf.set(key, list);
  }

  const clients = new Map<string, PostureClient>();
  const clientOf = (clientId: string): PostureClient => {
    let c = clients.get(clientId);
    if (c === undefined) {
      c = {
        client_id: clientId,
        client: names.get(clientId) ?? null,
        critical: 0,
        high: 0,
        overdue: 0,
        kev: 0,
        last_scan: null,
        stale_agents: stale === null ? null : (stale.get(clientId) ?? 0),
        targets: [],
      };
      clients.set(clientId, c);
    }
    return c;
  };
  for (const t of targets) {
    const c = clientOf(t.client_id);
    const lastScan: LastScan =
      t.last_session_id === null || t.last_scanned_at === null
        ? null
        : { session_id: t.last_session_id, scanned_at: t.last_scanned_at.toISOString() };
    for (const k of POSTURE_COUNTS) c[k] += t[k];
    c.last_scan = newer(c.last_scan, lastScan);
    c.targets.push({
      target: t.target,
      critical: t.critical,
      high: t.high,
      overdue: t.overdue,
      kev: t.kev,
      last_scan: lastScan,
      trend: trendOf.get(`${t.client_id}\u0000${t.target}`) ?? [],
    });
  }
  // A client whose agents went quiet before any scan arrived is still one to look at.
  for (const clientId of stale?.keys() ?? []) if (clientId !== '') clientOf(clientId);
  for (const c of clients.values()) c.targets.sort(worstFirst((t: PostureTarget) => t.target));
  answer.clients = [...clients.values()].sort(worstFirst((c: PostureClient) => c.client_id));
  return answer;
}
