import type pg from 'pg';
import { type BySeverity, emptyBySeverity, riskGrade, riskScore } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import {
  createLicense,
  createScopedUser,
  DAY_MS,
  FakeClock,
  heartbeatBody,
  uniqueClientId,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import { type Doc, postUpload, sessionParts } from '@svc/test-support/upload';

/**
 * GET /api/overview against the real portal on a real database: risk by scan time per
 * client, fleet states, sessions expiring within the notice window and the most frequent
 * open findings, each with exact numbers, for an admin and for scoped users.
 */

const entry = (title: string, severity: string, host: string, extra: Record<string, unknown> = {}) => ({
  title,
  severity,
  host,
  status: 'new',
  ...extra,
});

/** A file's findings and their entries: each entry's finding is the weakness it names on its host. */
const scanOf = (entries: ReturnType<typeof entry>[]) => ({
  findings: entries.map((e, i) => ({
    id: `f-${i}`,
    rule_id: e.title.toLowerCase().replaceAll(' ', '-'),
    title: e.title,
    severity: e.severity,
    host: e.host,
  })),
  remediation: entries.map((e, i) => ({ ...e, finding_id: `f-${i}` })),
});

describe('GET /api/overview', () => {
  // Tokens are checked against the wall clock, so the fake clock starts at the real time.
  const clock = new FakeClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  let portal: TestPortal;
  let admin: string;
  let db: pg.Client;
  const msp = uniqueClientId('msp');
  const pro = uniqueClientId('pro');
  let keys: { msp: string; pro: string };
  const daysAgo = (d: number) => new Date(clock.now().getTime() - d * DAY_MS).toISOString();

  /** The scan time each planted file states. */
  const scanned = new Map<string, string>();
  const upload = async (key: string, id: string, doc: Omit<Doc, 'metadata'>, metadata: Doc) => {
    const at = metadata['finished_at'] ?? metadata['started_at'];
    if (at !== undefined) scanned.set(id, at);
    clock.advance(1000);
    const res = await postUpload(portal.url, key, sessionParts({ metadata: { session_id: id, ...metadata }, ...doc }));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
  };
  const overview = (token: string, query = '') =>
    http(portal.url, 'GET', `/api/overview${query}`, { headers: withToken(token) });

  usePortalWithDb(
    async (p) => {
      ({ portal, db } = p);
      admin = await portal.adminToken();
      keys = {
        msp: (await createLicense(portal, { client_id: msp, tier: 'msp' })).key,
        pro: (await createLicense(portal, { client_id: pro, tier: 'professional' })).key,
      };
      // msp: two scans of one target (the older uploaded last), one of another, one beyond 90 days.
      await upload(
        keys.msp,
        'm_new',
        {
          summary: { risk_score: 40, risk_grade: 'C' },
          ...scanOf([
            entry('SMBv1 enabled', 'critical', '10.0.0.1'),
            entry('SMBv1 enabled', 'critical', '10.0.0.2'),
            entry('Telnet exposed', 'high', '10.0.0.3', {
              exception_status: 'accepted',
              exception_reason: 'jump host',
            }),
            entry('Weak TLS', 'medium', '10.0.0.4', { status: 'in_progress' }),
          ]),
          remediation_resolved: [entry('Old FTP', 'high', '10.0.0.5', { status: 'resolved' })],
          // It looked at 10.0.0.9 too: what the older scan found there (uploaded later) is resolved.
          coverage: {
            hosts: ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.9'],
            ports: { tcp: '1-65535' },
          },
        },
        { target: '10.0.0.0/24', client: 'MSP Client', finished_at: daysAgo(2) },
      );
      await upload(
        keys.msp,
        'm_old',
        { summary: { risk_score: 70, risk_grade: 'D' }, ...scanOf([entry('Never counted', 'low', '10.0.0.9')]) },
        { target: '10.0.0.0/24', client: 'MSP Client', finished_at: daysAgo(10) },
      );
      await upload(
        keys.msp,
        'm_dmz',
        {
          summary: { risk_score: 55, risk_grade: 'C' },
          ...scanOf([entry('Weak TLS', 'high', '192.0.2.1'), entry('Weak TLS', 'high', '192.0.2.2')]),
        },
        { target: '192.0.2.0/28', client: 'MSP Client', finished_at: daysAgo(5) },
      );
      await upload(
        keys.msp,
        'm_ancient',
        { summary: { risk_score: 99, risk_grade: 'F' } },
        { target: '198.51.100.0/24', client: 'MSP Client', finished_at: daysAgo(120) },
      );
      // pro: one scan with a score, one without.
      await upload(
        keys.pro,
        'p_one',
        { summary: { risk_score: 20, risk_grade: 'B' }, ...scanOf([entry('Weak TLS', 'low', '203.0.113.1')]) },
        { target: 'pro.example', client: 'Pro Client', started_at: daysAgo(3) },
      );
      await upload(keys.pro, 'p_noscore', {}, { target: 'pro2.example', client: 'Pro Client' });
      // Agents: one heard from now, one 11 minutes ago (stale), one deregistered; one of pro.
      const beat = (key: string, id: string) =>
        http(portal.url, 'POST', '/api/health', { headers: withKey(key), json: heartbeatBody(id) });
      expect((await beat(keys.msp, 'agent-stale')).status).toBe(200);
      expect((await beat(keys.msp, 'agent-gone')).status).toBe(200);
      clock.advance(11 * 60_000);
      expect((await beat(keys.msp, 'agent-online')).status).toBe(200);
      expect((await beat(keys.pro, 'agent-pro')).status).toBe(200);
      const dereg = await http(portal.url, 'PATCH', '/api/agents', {
        headers: withToken(admin),
        json: { agent_id: 'agent-gone', action: 'deregister' },
      });
      expect(dereg.status).toBe(200);
      // Expiry: m_dmz in 2.5 days, p_one in 6 days, m_new in 8 days (outside the 7-day window).
      const expireIn = (id: string, days: number) =>
        db.query('UPDATE sessions SET expires_at = $1 WHERE session_id = $2', [
          new Date(clock.now().getTime() + days * DAY_MS),
          id,
        ]);
      await expireIn('m_dmz', 2.5);
      await expireIn('p_one', 6);
      await expireIn('m_new', 8);
    },
    { now: clock.now },
  );

  /** A session's point: the score of what its scan found (the portal computes it; docs/scoring.md). */
  const point = (session_id: string, target: string, counts: Partial<BySeverity>) => {
    const risk_score = riskScore({ ...emptyBySeverity(), ...counts });
    return { session_id, target, scanned_at: scanned.get(session_id), risk_score, risk_grade: riskGrade(risk_score) };
  };

  it('an admin sees every client: risk by scan time, fleet, expiring, top findings', async () => {
    const res = await overview(admin);
    expect(res.status, res.text).toBe(200);
    // One series per target (a client's targets are not mixed), oldest scan first, whatever the
    // upload order; no score, or older than 90 days: not drawn.
    const expectedRisk = [
      {
        client_id: msp,
        client: 'MSP Client',
        target: '10.0.0.0/24',
        points: [
          point('m_old', '10.0.0.0/24', { low: 1 }),
          point('m_new', '10.0.0.0/24', { critical: 2, high: 1, medium: 1 }),
        ],
      },
      {
        client_id: msp,
        client: 'MSP Client',
        target: '192.0.2.0/28',
        points: [point('m_dmz', '192.0.2.0/28', { high: 2 })],
      },
      {
        client_id: pro,
        client: 'Pro Client',
        target: 'pro.example',
        points: [point('p_one', 'pro.example', { low: 1 })],
      },
    ].sort((a, b) => (a.client_id < b.client_id ? -1 : a.client_id > b.client_id ? 1 : 0));
    expect(res.body.risk).toEqual(expectedRisk);
    expect(res.body.risk_targets).toBe(3);
    expect(res.body.days).toBe(90);
    expect(res.body.fleet).toEqual({ online: 2, stale: 1, deregistered: 1, stale_threshold_seconds: 600 });
    expect(res.body.expiring).toEqual({
      within_days: 7,
      total: 2,
      sessions: [
        {
          session_id: 'm_dmz',
          client_id: msp,
          client: 'MSP Client',
          target: '192.0.2.0/28',
          expires_at: new Date(clock.now().getTime() + 2.5 * DAY_MS).toISOString(),
          days_remaining: 3,
        },
        {
          session_id: 'p_one',
          client_id: pro,
          client: 'Pro Client',
          target: 'pro.example',
          expires_at: new Date(clock.now().getTime() + 6 * DAY_MS).toISOString(),
          days_remaining: 6,
        },
      ],
    });
    // Open findings of record: not Telnet (an exception), not m_old's finding (m_new looked and did not find it).
    expect(res.body.top_findings).toEqual([
      { title: 'Weak TLS', severity: 'high', targets: 3, open: 4 },
      { title: 'SMBv1 enabled', severity: 'critical', targets: 1, open: 2 },
    ]);
  });

  it('days narrows the risk chart; a longer span reaches older scans', async () => {
    const count = async (q: string) =>
      (await overview(admin, q)).body.risk.flatMap((s: { points: unknown[] }) => s.points).length;
    expect(await count('?days=4')).toBe(2);
    expect(await count('?days=365')).toBe(5);
    expect((await overview(admin, '?days=365')).body.days).toBe(365);
  });

  it('a scoped user sees only their clients; the fleet only with health:agents', async () => {
    const proUser = await createScopedUser(portal, [pro]);
    const res = await overview(proUser.token);
    expect(res.status).toBe(200);
    expect(res.body.risk.map((s: { client_id: string }) => s.client_id)).toEqual([pro]);
    expect(res.body.risk_targets).toBe(1);
    expect(res.body.fleet).toBeNull();
    expect(res.body.expiring.total).toBe(1);
    expect(res.body.expiring.sessions.map((s: { session_id: string }) => s.session_id)).toEqual(['p_one']);
    expect(res.body.top_findings).toEqual([{ title: 'Weak TLS', severity: 'low', targets: 1, open: 1 }]);

    const mspUser = await createScopedUser(portal, [msp]);
    const m = await overview(mspUser.token);
    expect(m.body.fleet).toEqual({ online: 1, stale: 1, deregistered: 1, stale_threshold_seconds: 600 });
    expect(m.body.top_findings).toEqual([
      { title: 'Weak TLS', severity: 'high', targets: 2, open: 3 },
      { title: 'SMBv1 enabled', severity: 'critical', targets: 1, open: 2 },
    ]);
  });

  it('a remediation update re-counts the open findings', async () => {
    const res = await http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(admin),
      json: { session_id: 'm_new', client_id: msp, items: [{ title: 'SMBv1 enabled', status: 'resolved' }] },
    });
    expect(res.status, res.text).toBe(200);
    expect((await overview(admin)).body.top_findings).toEqual([
      { title: 'Weak TLS', severity: 'high', targets: 3, open: 4 },
    ]);
  });

  it('bad values are 400; no token is 401', async () => {
    for (const q of ['?days=0', '?days=366', '?days=x', '?other=1']) {
      const res = await overview(admin, q);
      expect(res.status, q).toBe(400);
      expect(typeof res.body.error).toBe('string');
    }
    expect((await http(portal.url, 'GET', '/api/overview')).status).toBe(401);
  });

  it('answers the targets whose newest scan scored highest, of every client, and how many there are', async () => {
    type Series = { client_id: string; target: string; points: { session_id: string; risk_score: number }[] };
    const keyOf = (s: Series) => `${s.client_id}/${s.target}`;
    const before = (await overview(admin)).body.risk as Series[];
    // 30 more targets of a client whose id sorts after the others, a scan each scoring 3 to 90,
    // and an older scan scoring 100 of the lowest (late-01) and of the highest (late-30); the
    // numbers are padded so that any collation orders them alike.
    const late = `zz-${uniqueClientId('late')}`;
    const scans = Array.from({ length: 30 }, (_, i) => ({
      id: `late_${i + 1}`,
      target: `late-${String(i + 1).padStart(2, '0')}.example`,
      hours: 1,
      score: (i + 1) * 3,
    }));
    scans.push({ id: 'late_1_old', target: 'late-01.example', hours: 72, score: 100 });
    scans.push({ id: 'late_30_old', target: 'late-30.example', hours: 72, score: 100 });
    await db.query(
      `INSERT INTO sessions (session_id, client_id, client, target, metadata, files, uploaded_at, updated_at,
                             expires_at, scanned_at, risk_score, risk_grade)
       SELECT id, $1, 'Late Client', target, jsonb_build_object('session_id', id), '{}', now(), now(),
              now() + interval '90 days', $2::timestamptz - make_interval(hours => hours), score, 'C'
       FROM unnest($3::text[], $4::text[], $5::int[], $6::float8[]) AS x(id, target, hours, score)`,
      [
        late,
        clock.now(),
        scans.map((x) => x.id),
        scans.map((x) => x.target),
        scans.map((x) => x.hours),
        scans.map((x) => x.score),
      ],
    );
    const res = await overview(admin);
    expect(res.status, res.text).toBe(200);
    expect(res.body.risk_targets).toBe(before.length + 30);
    // The 20 highest newest scores, whichever client: late-01 ranks by its newest 3, not its older 100.
    const ranked = [
      ...before.map((s) => ({ key: keyOf(s), score: s.points.at(-1)?.risk_score ?? 0 })),
      ...scans.slice(0, 30).map((x) => ({ key: `${late}/${x.target}`, score: x.score })),
    ]
      .sort((a, b) => b.score - a.score)
      .slice(0, 20)
      .map((r) => r.key);
    const answered = (res.body.risk as Series[]).map(keyOf);
    expect(answered).toHaveLength(20);
    expect([...answered].sort()).toEqual([...ranked].sort());
    expect(answered).not.toContain(`${late}/late-01.example`);
    // By client, then target; a target's scans in the span oldest first, its older high score too.
    const byClientThenTarget = [...(res.body.risk as Series[])].sort((a, b) =>
      a.client_id === b.client_id ? (a.target < b.target ? -1 : 1) : a.client_id < b.client_id ? -1 : 1,
    );
    expect(answered).toEqual(byClientThenTarget.map(keyOf));
    const top = (res.body.risk as Series[]).find((s) => s.target === 'late-30.example');
    expect(top?.points.map((p) => [p.session_id, p.risk_score])).toEqual([
      ['late_30_old', 100],
      ['late_30', 90],
    ]);
  });
});
