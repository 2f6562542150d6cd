import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, createScopedUser, FakeClock, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';

/**
 * GET /api/benchmark (docs/api.md#sessions; benchmark block; business and msp).
 * The tests build the peer set step by step, so they run in order. Peers come from a
 * snapshot rebuilt once it is SVC_BENCHMARK_SNAPSHOT_MINUTES old by the portal's clock (2
 * here, so the fake clock stays well inside the admin token's hour): `bench` moves the clock
 * past that, so each call sees every upload made before it.
 */

const SNAPSHOT_ENV = { SVC_BENCHMARK_SNAPSHOT_MINUTES: '2' };
const SNAPSHOT_AGE_MS = 2 * 60_000 + 1_000;

interface Scan {
  target: string;
  risk: number | null;
  findings: number;
  hosts: number;
  sev: [critical: number, high: number, medium: number, low: number, info: number];
}

function sessionJson(sessionId: string, client: string, s: Scan) {
  const [critical, high, medium, low, info] = s.sev;
  return {
    metadata: { session_id: sessionId, client, target: s.target },
    summary: {
      ...(s.risk === null ? {} : { risk_score: s.risk, risk_grade: 'C' }),
      total_findings: s.findings,
      total_hosts: s.hosts,
      severity_counts: { critical, high, medium, low, info },
    },
  };
}

const metric = (value: number | null, percentile: number, label: string, sampleSize: number) => ({
  value,
  percentile,
  label,
  direction: 'lower_is_better',
  sample_size: sampleSize,
});

describe('GET /api/benchmark', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let bizA: LicenseFixture;
  let bizB: LicenseFixture;
  let mspC: LicenseFixture;
  let proD: LicenseFixture;
  const ids: Record<string, string> = {};

  async function upload(name: string, key: LicenseFixture, client: string, scan: Scan) {
    clock.advance(60_000);
    ids[name] = newSessionId();
    const res = await postUpload(portal.url, key.key, sessionParts(sessionJson(ids[name]!, client, scan)));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
  }
  const bench = (name: string, headers: Record<string, string>) => {
    clock.advance(SNAPSHOT_AGE_MS);
    return http(portal.url, 'GET', `/api/benchmark?session=${ids[name] ?? name}`, { headers });
  };

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now, env: SNAPSHOT_ENV });
    bizA = await createLicense(portal, { tier: 'business' });
    bizB = await createLicense(portal, { tier: 'business' });
    mspC = await createLicense(portal, { tier: 'msp' });
    proD = await createLicense(portal, { tier: 'professional' });
    // A/t1: an older scan (risk 90), then the session under test (risk 40, 2 findings per host, ratio 0.2).
    await upload('A1-old', bizA, 'Acme', { target: 't1', risk: 90, findings: 50, hosts: 1, sev: [20, 20, 5, 5, 0] });
    await upload('A1', bizA, 'Acme', { target: 't1', risk: 40, findings: 10, hosts: 5, sev: [1, 1, 4, 2, 2] });
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it('no peers yet: percentile 50, label "No peers" (its own older scan is not a peer)', async () => {
    const res = await bench('A1', withKey(bizA.key));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      session_id: ids['A1'],
      sample_size: 0,
      min_sample_size: 3,
      fetched_at: clock.now().toISOString(),
      metrics: {
        risk_score: metric(40, 50, 'No peers', 0),
        findings_per_host: metric(2, 50, 'No peers', 0),
        critical_high_ratio: metric(0.2, 50, 'No peers', 0),
      },
    });
  });

  it("the client's own other targets are not peers (own uploads must not move the answer)", async () => {
    // A/t2: same client, another target.
    await upload('A2', bizA, 'Acme', { target: 't2', risk: 20, findings: 4, hosts: 4, sev: [0, 0, 2, 2, 0] });
    const res = await bench('A1', withKey(bizA.key));
    expect(res.status).toBe(200);
    expect(res.body.sample_size).toBe(0);
    expect(res.body.metrics).toEqual({
      risk_score: metric(40, 50, 'No peers', 0),
      findings_per_host: metric(2, 50, 'No peers', 0),
      critical_high_ratio: metric(0.2, 50, 'No peers', 0),
    });
  });

  describe('with other clients B, C and D', () => {
    beforeAll(async () => {
      // B/t1: an older scan (risk 10, not a peer) and the latest (risk 60, 3 per host, ratio 6/30 = 0.2: a tie).
      await upload('B1-old', bizB, 'Beta', { target: 't1', risk: 10, findings: 1, hosts: 1, sev: [0, 0, 0, 1, 0] });
      await upload('B1', bizB, 'Beta', { target: 't1', risk: 60, findings: 30, hosts: 10, sev: [3, 3, 10, 10, 4] });
      // B/t3: risk 40 (a tie); no host counted; findings without severities: no ratio.
      await upload('B3', bizB, 'Beta', { target: 't3', risk: 40, findings: 5, hosts: 0, sev: [0, 0, 0, 0, 0] });
      // C/t1 (msp): worst everywhere.
      await upload('C1', mspC, 'Gamma', { target: 't1', risk: 80, findings: 50, hosts: 5, sev: [10, 10, 10, 10, 10] });
      // D/t9 (professional): no risk score (older scanner), nothing found: 0 per host, ratio 0.
      await upload('D9', proD, 'Delta', { target: 't9', risk: null, findings: 0, hosts: 3, sev: [0, 0, 0, 0, 0] });
    });

    it('the minimum of 3 other clients is per metric: risk has only B and C, the others have B, C and D', async () => {
      const res = await bench('A1', withKey(bizA.key));
      expect(res.status).toBe(200);
      // Peers: B/t1 (latest), B/t3, C/t1, D/t9. Values compare by bucket; percentiles round down to tens.
      expect(res.body.sample_size).toBe(4);
      expect(res.body.metrics).toEqual({
        // Peers 60 (B/t1), 40 (B/t3), 80 (C/t1); D has none: n = 3 but other clients B, C = 2.
        risk_score: metric(40, 50, 'Not enough peers', 3),
        // Buckets of 3 (B/t1, bucket 3-5), 10 (C/t1, 10-20), 0 (D/t9, 0-0.5) against 2 (2-3); B/t3 has no hosts.
        // Other clients B, C, D. 2 worse of 3 → 66.7 → 60.
        findings_per_host: metric(2, 60, 'Above average', 3),
        // 0.2 (B/t1, the same tenth: a tie), 0.4 (C/t1), 0 (D/t9); B/t3 has none. Other clients B, C, D.
        // 1 worse, 1 tie of 3 → 50.
        critical_high_ratio: metric(0.2, 50, 'Average', 3),
      });
    });
  });

  describe('with several clients and targets', () => {
    let bizE: LicenseFixture;
    let mspF: LicenseFixture;
    beforeAll(async () => {
      bizE = await createLicense(portal, { tier: 'business' });
      mspF = await createLicense(portal, { tier: 'msp' });
      // E/t1: risk 70, 10/5 = 2 per host (a tie with A/t1), ratio 1/10 = 0.1.
      await upload('E1', bizE, 'Epsilon', { target: 't1', risk: 70, findings: 10, hosts: 5, sev: [0, 1, 4, 3, 2] });
      // F/t5 (msp): risk 55, 20/4 = 5 per host, ratio 3/20 = 0.15.
      await upload('F5', mspF, 'Zeta', { target: 't5', risk: 55, findings: 20, hosts: 4, sev: [1, 2, 5, 6, 6] });
    });

    const expectedA1 = () => ({
      session_id: ids['A1'],
      // Peers: B/t1 (latest), B/t3, C/t1, D/t9, E/t1, F/t5.
      sample_size: 6,
      min_sample_size: 3,
      fetched_at: clock.now().toISOString(),
      metrics: {
        // Peers 60 (B/t1), 40 (B/t3), 80 (C/t1), 70 (E/t1), 55 (F/t5); D has none.
        // Other clients B, C, E, F. 4 worse (60, 80, 70, 55), 1 tie (40) of 5 → 4.5/5 = 90.
        risk_score: metric(40, 90, 'Top 10%', 5),
        // Peers 3 (B/t1), 10 (C/t1), 0 (D/t9), 2 (E/t1), 5 (F/t5); B/t3 has no hosts.
        // Other clients B, C, D, E, F. 3 worse (3, 10, 5), 1 tie (2) of 5 → 3.5/5 = 70.
        findings_per_host: metric(2, 70, 'Above average', 5),
        // Peers 0.2 (B/t1), 0.4 (C/t1), 0 (D/t9), 0.1 (E/t1), 0.15 (F/t5, the same tenth as 0.1); B/t3 has none.
        // Other clients B, C, D, E, F. 1 worse (0.4), 1 tie (0.2) of 5 → 1.5/5 = 30.
        critical_high_ratio: metric(0.2, 30, 'Below average', 5),
      },
    });

    it("percentiles against the latest session of every other client's client/target pairs", async () => {
      const res = await bench('A1', withKey(bizA.key));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expectedA1());
    });

    it('the same answer for the legacy key, an admin JWT and a scoped user of the client', async () => {
      const user = await createScopedUser(portal, [bizA.record.client_id]);
      for (const headers of [withKey(LEGACY_KEY), withToken(await portal.adminToken()), withToken(user.token)]) {
        const res = await bench('A1', headers);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(expectedA1());
      }
    });

    it('from the worst session: bottom 10% everywhere', async () => {
      const res = await bench('C1', withKey(mspC.key));
      expect(res.status).toBe(200);
      // Peers: A/t1 (latest), A/t2, B/t1, B/t3, D/t9, E/t1, F/t5; none does worse or ties.
      expect(res.body).toEqual({
        session_id: ids['C1'],
        sample_size: 7,
        min_sample_size: 3,
        fetched_at: clock.now().toISOString(),
        metrics: {
          // 40, 20, 60, 40, 70, 55 (D has none); other clients A, B, E, F.
          risk_score: metric(80, 0, 'Bottom 10%', 6),
          // 2, 1, 3, 0, 2, 5 (B/t3 has none); other clients A, B, D, E, F.
          findings_per_host: metric(10, 0, 'Bottom 10%', 6),
          // 0.2, 0, 0.2, 0, 0.1, 0.15 (B/t3 has none); other clients A, B, D, E, F.
          critical_high_ratio: metric(0.4, 0, 'Bottom 10%', 6),
        },
      });
    });

    it('a session without a risk score or hosts: value null, "No data"', async () => {
      const res = await bench('B3', withKey(bizB.key));
      expect(res.status).toBe(200);
      // Peers: A/t1, A/t2, C/t1, D/t9, E/t1, F/t5 (not B/t1, its own client's); all 6 have both metrics.
      expect(res.body.sample_size).toBe(6);
      expect(res.body.metrics.findings_per_host).toEqual(metric(null, 50, 'No data', 6));
      expect(res.body.metrics.critical_high_ratio).toEqual(metric(null, 50, 'No data', 6));
      // Risk 40 among 40 (A/t1), 20 (A/t2), 80 (C/t1), 70 (E/t1), 55 (F/t5); B/t1 is its own
      // client's and no peer. Other clients A, C, E, F. 3 worse, 1 tie of 5 → 70.
      expect(res.body.metrics.risk_score).toEqual(metric(40, 70, 'Above average', 5));
    });

    it('an older session of a pair is benchmarked against the same peers as the latest', async () => {
      const res = await bench('B1-old', withKey(bizB.key));
      expect(res.status).toBe(200);
      // Own client B excluded; peers A/t1, A/t2, C/t1, D/t9, E/t1, F/t5.
      // Risk 10 beats 40, 20, 80, 70, 55 (D has none): 5 worse of 5; other clients A, C, E, F.
      expect(res.body.sample_size).toBe(6);
      expect(res.body.metrics.risk_score).toEqual(metric(10, 100, 'Top 10%', 5));
    });

    it('nothing about another tenant leaks: only the documented fields', async () => {
      const res = await bench('A1', withKey(bizA.key));
      expect(Object.keys(res.body).sort()).toEqual([
        'fetched_at',
        'metrics',
        'min_sample_size',
        'sample_size',
        'session_id',
      ]);
      for (const other of [bizB, mspC, proD, bizE, mspF]) expect(res.text).not.toContain(other.record.client_id);
      for (const name of ['Beta', 'Gamma', 'Delta', 'Epsilon', 'Zeta', ids['B1']!, ids['C1']!, ids['E1']!, ids['F5']!])
        expect(res.text).not.toContain(name);
    });
  });

  describe('access', () => {
    it('a professional key: 403 Insufficient permissions for benchmark (even on its own session)', async () => {
      const res = await bench('D9', withKey(proD.key));
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Insufficient permissions for benchmark' });
    });

    it('a business key of another client: the same 404 as a missing session', async () => {
      const res = await bench('A1', withKey(bizB.key));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Session not found' });
    });

    it('a scoped user of another client: the same 404 as a missing session', async () => {
      const user = await createScopedUser(portal, [bizB.record.client_id]);
      const res = await bench('A1', withToken(user.token));
      expect([res.status, res.body]).toEqual([404, { error: 'Session not found' }]);
    });

    it('no credential: 401; unknown session: 404; missing or invalid session: 400', async () => {
      const none = await bench('A1', {});
      expect([none.status, none.body]).toEqual([401, { error: 'Unauthorized' }]);
      const unknown = await bench(newSessionId(), withKey(bizA.key));
      expect([unknown.status, unknown.body]).toEqual([404, { error: 'Session not found' }]);
      const missing = await http(portal.url, 'GET', '/api/benchmark', { headers: withKey(bizA.key) });
      expect([missing.status, missing.body]).toEqual([400, { error: 'Missing session parameter' }]);
      const invalid = await http(portal.url, 'GET', '/api/benchmark?session=a.b', { headers: withKey(bizA.key) });
      expect([invalid.status, invalid.body]).toEqual([
        400,
        { error: 'Invalid session parameter: must match ^[a-zA-Z0-9_-]+$' },
      ]);
    });

    it('a share token is not a credential for the benchmark', async () => {
      const token = (
        await http(portal.url, 'GET', `/api/sessions?session=${ids['A1']}`, {
          headers: withToken(await portal.adminToken()),
        })
      ).body.session.share_url.split('token=')[1];
      const res = await http(portal.url, 'GET', `/api/benchmark?session=${ids['A1']}&token=${token}`);
      expect(res.status).toBe(400);
    });
  });
});

/**
 * A client must not recover another client's values from its percentiles. The
 * caller's client is never a peer, peers come from a snapshot that only a rebuild moves,
 * values compare by bucket and percentiles are rounded down to tens, and a percentile
 * needs peers of at least 3 other clients. A portal of its own, built step by step: the
 * tests run in order.
 */
describe('GET /api/benchmark: what a client can learn about others', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let bizA: LicenseFixture;
  let bizB: LicenseFixture;
  const ids: Record<string, string> = {};

  /** Uploads `name`; a name uploaded before is uploaded again under the same session id (a replacement). */
  async function upload(name: string, key: LicenseFixture, client: string, scan: Scan) {
    clock.advance(60_000);
    ids[name] ??= newSessionId();
    const id = ids[name];
    const res = await postUpload(portal.url, key.key, sessionParts(sessionJson(id, client, scan)));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
  }
  /** A's probe benchmarked by A's own key: sample size and metrics (fetched_at moves with the clock). */
  async function probe() {
    const res = await http(portal.url, 'GET', `/api/benchmark?session=${ids['probe']}`, { headers: withKey(bizA.key) });
    expect(res.status, res.text).toBe(200);
    return { sample_size: res.body.sample_size as number, metrics: res.body.metrics };
  }
  /** Let the snapshot age past SVC_BENCHMARK_SNAPSHOT_MINUTES: the next benchmark rebuilds it. */
  const rebuild = () => clock.advance(SNAPSHOT_AGE_MS);
  const notEnough = (n: number) => ({
    sample_size: n,
    metrics: {
      risk_score: metric(50, 50, 'Not enough peers', n),
      findings_per_host: metric(2, 50, 'Not enough peers', n),
      critical_high_ratio: metric(0.2, 50, 'Not enough peers', n),
    },
  });

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now, env: SNAPSHOT_ENV });
    bizA = await createLicense(portal, { tier: 'business' });
    bizB = await createLicense(portal, { tier: 'business' });
    // A's probe: risk 50, 10/5 = 2 per host, ratio 2/10 = 0.2.
    await upload('probe', bizA, 'Acme', { target: 'probe', risk: 50, findings: 10, hosts: 5, sev: [1, 1, 4, 2, 2] });
    // A's own other targets: not peers.
    await upload('A-o1', bizA, 'Acme', { target: 'o1', risk: 10, findings: 2, hosts: 2, sev: [0, 0, 1, 1, 0] });
    await upload('A-o2', bizA, 'Acme', { target: 'o2', risk: 55, findings: 6, hosts: 4, sev: [0, 1, 2, 2, 1] });
    await upload('A-o3', bizA, 'Acme', { target: 'o3', risk: 70, findings: 12, hosts: 4, sev: [2, 2, 4, 2, 2] });
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it("the client's own other targets are no peers", async () => {
    rebuild();
    expect(await probe()).toEqual({
      sample_size: 0,
      metrics: {
        risk_score: metric(50, 50, 'No peers', 0),
        findings_per_host: metric(2, 50, 'No peers', 0),
        critical_high_ratio: metric(0.2, 50, 'No peers', 0),
      },
    });
  });

  it('one or two other clients: "Not enough peers", and A\'s answer does not move when B\'s scores do', async () => {
    // B/v above A's probe everywhere: risk 90, 50/5 = 10 per host, ratio 20/50 = 0.4.
    await upload('B-v', bizB, 'Beta', { target: 'v', risk: 90, findings: 50, hosts: 5, sev: [10, 10, 10, 10, 10] });
    rebuild();
    const whenHigh = await probe();
    expect(whenHigh).toEqual(notEnough(1));
    // The same session of B again, below A's probe everywhere: risk 5, 1/2 = 0.5 per host, ratio 0.
    await upload('B-v', bizB, 'Beta', { target: 'v', risk: 5, findings: 1, hosts: 2, sev: [0, 0, 0, 1, 0] });
    rebuild();
    expect(await probe()).toEqual(whenHigh);

    const mspC = await createLicense(portal, { tier: 'msp' });
    // C/c: risk 60, 12/3 = 4 per host, ratio 3/12 = 0.25.
    await upload('C-c', mspC, 'Gamma', { target: 'c', risk: 60, findings: 12, hosts: 3, sev: [1, 2, 3, 3, 3] });
    rebuild();
    expect(await probe()).toEqual(notEnough(2));
  });

  const withD = {
    sample_size: 3,
    metrics: {
      // Buckets of 5, 60, 65 against 50: 2 worse of 3 → 66.7 → 60.
      risk_score: metric(50, 60, 'Above average', 3),
      // 0.5 (0.5-1), 4 (3-5), 2 (2-3, a tie) against 2: 1 worse, 1 tie of 3 → 50.
      findings_per_host: metric(2, 50, 'Average', 3),
      // 0, 0.25 (the same tenth as 0.2: a tie), 0 against 0.2: 1 tie of 3 → 16.7 → 10.
      critical_high_ratio: metric(0.2, 10, 'Bottom 10%', 3),
    },
  };

  it('exactly 3 other clients: the percentile appears, in buckets and tens', async () => {
    const bizD = await createLicense(portal, { tier: 'business' });
    // D/d: risk 65, 6/3 = 2 per host, nothing critical or high: ratio 0.
    await upload('D-d', bizD, 'Delta', { target: 'd', risk: 65, findings: 6, hosts: 3, sev: [0, 0, 2, 2, 2] });
    rebuild();
    // Peers B/v (the low one), C/c, D/d: other clients B, C, D.
    expect(await probe()).toEqual(withD);
  });

  it('between rebuilds nothing moves: a peer changing is seen only after SVC_BENCHMARK_SNAPSHOT_MINUTES', async () => {
    await upload('B-v', bizB, 'Beta', { target: 'v', risk: 90, findings: 50, hosts: 5, sev: [10, 10, 10, 10, 10] });
    clock.advance(50_000);
    expect(await probe()).toEqual(withD);
    rebuild();
    // B/v at 90 is worse now: risk 3 worse of 3 → 100.
    expect((await probe()).metrics.risk_score).toEqual(metric(50, 100, 'Top 10%', 3));
  });

  it('a sweep of the probe over risk 0..100 cannot recover any peer value', async () => {
    // Two more clients at values between the tens: peers at 90 (B), 60 (C), 65 (D), 33 (E), 47 (F).
    for (const [name, client, risk] of [
      ['E-e', 'Epsilon', 33],
      ['F-f', 'Zeta', 47],
    ] as const) {
      const key = await createLicense(portal, { tier: 'business' });
      await upload(name, key, client, { target: 'x', risk, findings: 6, hosts: 3, sev: [0, 0, 2, 2, 2] });
    }
    rebuild();
    const answers: number[] = [];
    for (let risk = 0; risk <= 100; risk++) {
      // The same session of A uploaded again with each score (each upload also moves the clock a minute, past a rebuild).
      await upload('probe', bizA, 'Acme', { target: 'probe', risk, findings: 10, hosts: 5, sev: [1, 1, 4, 2, 2] });
      const { metrics } = await probe();
      expect(metrics.risk_score.value).toBe(risk);
      answers.push(metrics.risk_score.percentile as number);
    }
    // Every answer is a multiple of 10, and it only depends on the tens of the probe's own score:
    // The answer changes nowhere but at a multiple of 10, so no peer is placed more precisely
    // than its bucket of 10 (the exact sweep used to change at 33, 47, 60, 65 and 90).
    expect(answers.every((p) => p % 10 === 0)).toBe(true);
    const changes = answers.flatMap((p, risk) => (risk > 0 && p !== answers[risk - 1] ? [risk] : []));
    expect(changes.every((risk) => risk % 10 === 0)).toBe(true);
    for (const peer of [33, 47, 65])
      expect(answers[peer - 1], `the answer at ${peer - 1} and ${peer}`).toBe(answers[peer]);
    expect(new Set(answers).size).toBeLessThanOrEqual(11);
    // The buckets, for the record: 5 peers; 100 → 0 worse; 0-29 → all 5 worse.
    expect(answers[0]).toBe(100);
    expect(answers[100]).toBe(0);
  });
});

describe('GET /api/benchmark of a scan that found no live host', () => {
  let portal: TestPortal;
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it('findings_per_host is 0, a number as the contract writes it (no host and no finding: nothing found per host)', async () => {
    portal = await startTestPortal();
    const biz = await createLicense(portal, { tier: 'business' });
    const id = newSessionId();
    const empty = sessionJson(id, 'Acme', { target: 'dark', risk: 0, findings: 0, hosts: 0, sev: [0, 0, 0, 0, 0] });
    expect((await postUpload(portal.url, biz.key, sessionParts(empty))).status).toBe(200);
    const res = await http(portal.url, 'GET', `/api/benchmark?session=${id}`, { headers: withKey(biz.key) });
    expect(res.status).toBe(200);
    expect(res.body.metrics.findings_per_host).toEqual(metric(0, 50, 'No peers', 0));
    expect(res.body.metrics.critical_high_ratio).toEqual(metric(0, 50, 'No peers', 0));
  });
});
