import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, createScopedUser, FakeClock, type LicenseFixture } from './helpers/factories.ts';
import { http, withKey, withToken } from './helpers/http.ts';
import { LEGACY_KEY, startTestPortal, type TestPortal } from './helpers/portal.ts';
import { newSessionId, postUpload, sessionParts } from './helpers/upload.ts';

/**
 * GET /api/benchmark (DESIGN D9; SPEC benchmark block and rule 5: business and msp).
 * The tests build the peer set step by step, so they run in order.
 */

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

const metric = (value: number | null, percentile: number, label: string, sampleSize: number) => ({ value, percentile, label, direction: 'lower_is_better', sample_size: sampleSize });

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
  const bench = (name: string, headers: Record<string, string>) => http(portal.url, 'GET', `/api/benchmark?session=${ids[name] ?? name}`, { headers });

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
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

  it('fewer than 3 peers: "Not enough peers", no percentile that would describe one tenant', async () => {
    // A/t2: same client, another target: a peer.
    await upload('A2', bizA, 'Acme', { target: 't2', risk: 20, findings: 4, hosts: 4, sev: [0, 0, 2, 2, 0] });
    const res = await bench('A1', withKey(bizA.key));
    expect(res.status).toBe(200);
    expect(res.body.sample_size).toBe(1);
    expect(res.body.metrics).toEqual({
      risk_score: metric(40, 50, 'Not enough peers', 1),
      findings_per_host: metric(2, 50, 'Not enough peers', 1),
      critical_high_ratio: metric(0.2, 50, 'Not enough peers', 1),
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
      // Peers: A/t2, B/t1 (latest), B/t3, C/t1, D/t9.
      expect(res.body.sample_size).toBe(5);
      expect(res.body.metrics).toEqual({
        // Peers 20 (A/t2), 60 (B/t1), 40 (B/t3), 80 (C/t1); D has none: n = 4 but other clients B, C = 2.
        risk_score: metric(40, 50, 'Not enough peers', 4),
        // Peers 1 (A/t2), 3 (B/t1), 10 (C/t1), 0 (D/t9); B/t3 has no hosts. Other clients B, C, D.
        // 2 worse (3, 10) of 4 → 50.
        findings_per_host: metric(2, 50, 'Average', 4),
        // Peers 0 (A/t2), 0.2 (B/t1), 0.4 (C/t1), 0 (D/t9); B/t3 has none. Other clients B, C, D.
        // 1 worse (0.4), 1 tie (0.2) of 4 → 37.5 → 38.
        critical_high_ratio: metric(0.2, 38, 'Below average', 4),
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
      // Peers: A/t2, B/t1 (latest), B/t3, C/t1, D/t9, E/t1, F/t5.
      sample_size: 7,
      min_sample_size: 3,
      fetched_at: clock.now().toISOString(),
      metrics: {
        // Peers 20 (A/t2), 60 (B/t1), 40 (B/t3), 80 (C/t1), 70 (E/t1), 55 (F/t5); D has none.
        // Other clients B, C, E, F. 4 worse (60, 80, 70, 55), 1 tie (40) of 6 → 4.5/6 = 75.
        risk_score: metric(40, 75, 'Above average', 6),
        // Peers 1 (A/t2), 3 (B/t1), 10 (C/t1), 0 (D/t9), 2 (E/t1), 5 (F/t5); B/t3 has no hosts.
        // Other clients B, C, D, E, F. 3 worse (3, 10, 5), 1 tie (2) of 6 → 3.5/6 = 58.3 → 58.
        findings_per_host: metric(2, 58, 'Average', 6),
        // Peers 0 (A/t2), 0.2 (B/t1), 0.4 (C/t1), 0 (D/t9), 0.1 (E/t1), 0.15 (F/t5); B/t3 has none.
        // Other clients B, C, D, E, F. 1 worse (0.4), 1 tie (0.2) of 6 → 1.5/6 = 25.
        critical_high_ratio: metric(0.2, 25, 'Below average', 6),
      },
    });

    it('percentiles against the latest session of every other client/target pair', async () => {
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
      // Peers: A/t1, A/t2, B/t1 (its own client's other target), C/t1, D/t9, E/t1, F/t5; all 7 have both metrics.
      expect(res.body.sample_size).toBe(7);
      expect(res.body.metrics.findings_per_host).toEqual(metric(null, 50, 'No data', 7));
      expect(res.body.metrics.critical_high_ratio).toEqual(metric(null, 50, 'No data', 7));
      // Risk 40 among 40 (A/t1), 20 (A/t2), 60 (B/t1), 80 (C/t1), 70 (E/t1), 55 (F/t5): B/t1 counts
      // in n but not as another client (A, C, E, F). 4 worse, 1 tie of 6 → 75.
      expect(res.body.metrics.risk_score).toEqual(metric(40, 75, 'Above average', 6));
    });

    it('an older session of a pair is benchmarked against the same peers as the latest', async () => {
      const res = await bench('B1-old', withKey(bizB.key));
      expect(res.status).toBe(200);
      // Own pair B/t1 excluded; peers A/t1, A/t2, B/t3, C/t1, D/t9, E/t1, F/t5.
      // Risk 10 beats 40, 20, 40, 80, 70, 55 (D has none): 6 worse of 6; other clients A, C, E, F.
      expect(res.body.sample_size).toBe(7);
      expect(res.body.metrics.risk_score).toEqual(metric(10, 100, 'Top 10%', 6));
    });

    it('nothing about another tenant leaks: only the documented fields', async () => {
      const res = await bench('A1', withKey(bizA.key));
      expect(Object.keys(res.body).sort()).toEqual(['fetched_at', 'metrics', 'min_sample_size', 'sample_size', 'session_id']);
      for (const other of [bizB, mspC, proD, bizE, mspF]) expect(res.text).not.toContain(other.record.client_id);
      for (const name of ['Beta', 'Gamma', 'Delta', 'Epsilon', 'Zeta', ids['B1']!, ids['C1']!, ids['E1']!, ids['F5']!]) expect(res.text).not.toContain(name);
    });
  });

  describe('access', () => {
    it('a professional key: 403 Insufficient permissions for benchmark (even on its own session)', async () => {
      const res = await bench('D9', withKey(proD.key));
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Insufficient permissions for benchmark' });
    });

    it("a business key of another client: the same 404 as a missing session (D17)", async () => {
      const res = await bench('A1', withKey(bizB.key));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Session not found' });
    });

    it('a scoped user of another client: the same 404 as a missing session (D17)', async () => {
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
      expect([invalid.status, invalid.body]).toEqual([400, { error: 'Invalid session parameter: must match ^[a-zA-Z0-9_-]+$' }]);
    });

    it('a share token is not a credential for the benchmark', async () => {
      const token = (await http(portal.url, 'GET', `/api/sessions?session=${ids['A1']}`, { headers: withToken(await portal.adminToken()) })).body.session.share_url.split('token=')[1];
      const res = await http(portal.url, 'GET', `/api/benchmark?session=${ids['A1']}&token=${token}`);
      expect(res.status).toBe(400);
    });
  });
});

/**
 * The privacy minimum counts other clients, not peers: a client's own other targets are
 * peers (in n, worse, equal and sample_size) but cannot make up the 3, or a client with a
 * single other tenant in the portal could read that tenant's score off its percentile by
 * uploading probes. A portal of its own, built step by step: the tests run in order.
 */
describe('GET /api/benchmark: the minimum of 3 counts other clients', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let bizA: LicenseFixture;
  let bizB: LicenseFixture;
  const ids: Record<string, string> = {};

  /** Uploads `name`; a name uploaded before is uploaded again under the same session id (a replacement). */
  async function upload(name: string, key: LicenseFixture, client: string, scan: Scan) {
    clock.advance(60_000);
    const id = (ids[name] ??= newSessionId());
    const res = await postUpload(portal.url, key.key, sessionParts(sessionJson(id, client, scan)));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
  }
  /** A's probe benchmarked by A's own key: sample size and metrics (fetched_at moves with the clock). */
  async function probe() {
    const res = await http(portal.url, 'GET', `/api/benchmark?session=${ids['probe']}`, { headers: withKey(bizA.key) });
    expect(res.status, res.text).toBe(200);
    return { sample_size: res.body.sample_size as number, metrics: res.body.metrics };
  }
  const notEnough = (n: number) => ({
    sample_size: n,
    metrics: {
      risk_score: metric(50, 50, 'Not enough peers', n),
      findings_per_host: metric(2, 50, 'Not enough peers', n),
      critical_high_ratio: metric(0.2, 50, 'Not enough peers', n),
    },
  });

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    bizA = await createLicense(portal, { tier: 'business' });
    bizB = await createLicense(portal, { tier: 'business' });
    // A's probe: risk 50, 10/5 = 2 per host, ratio 2/10 = 0.2.
    await upload('probe', bizA, 'Acme', { target: 'probe', risk: 50, findings: 10, hosts: 5, sev: [1, 1, 4, 2, 2] });
    // A's own other targets (known to A): risk 10, 55, 70; per host 1, 1.5, 3; ratio 0, 1/6, 4/12.
    await upload('A-o1', bizA, 'Acme', { target: 'o1', risk: 10, findings: 2, hosts: 2, sev: [0, 0, 1, 1, 0] });
    await upload('A-o2', bizA, 'Acme', { target: 'o2', risk: 55, findings: 6, hosts: 4, sev: [0, 1, 2, 2, 1] });
    await upload('A-o3', bizA, 'Acme', { target: 'o3', risk: 70, findings: 12, hosts: 4, sev: [2, 2, 4, 2, 2] });
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it("3 peers that are all the client's own other targets: \"Not enough peers\"", async () => {
    // Peers A/o1, A/o2, A/o3: n = 3 for every metric, other clients 0.
    expect(await probe()).toEqual(notEnough(3));
  });

  it('one other client B: "Not enough peers" though n = 4, and A\'s answer does not move when B\'s scores do', async () => {
    // B/v above A's probe everywhere: risk 90, 50/5 = 10 per host, ratio 20/50 = 0.4.
    await upload('B-v', bizB, 'Beta', { target: 'v', risk: 90, findings: 50, hosts: 5, sev: [10, 10, 10, 10, 10] });
    const whenHigh = await probe();
    // Peers A/o1, A/o2, A/o3, B/v: n = 4, other clients B = 1. (Counting peers only, risk would
    // have been 3 worse of 4 = 75 here and 2 of 4 = 50 below: B's score relative to A's probe.)
    expect(whenHigh).toEqual(notEnough(4));

    // The same session of B again, below A's probe everywhere: risk 5, 1/2 = 0.5 per host, ratio 0.
    await upload('B-v', bizB, 'Beta', { target: 'v', risk: 5, findings: 1, hosts: 2, sev: [0, 0, 0, 1, 0] });
    const whenLow = await probe();
    expect(whenLow, `A's answer moved from ${JSON.stringify(whenHigh)} to ${JSON.stringify(whenLow)} when only B's scores changed`).toEqual(whenHigh);
  });

  it('two other clients: still "Not enough peers"', async () => {
    const mspC = await createLicense(portal, { tier: 'msp' });
    // C/c: risk 60, 12/3 = 4 per host, ratio 3/12 = 0.25.
    await upload('C-c', mspC, 'Gamma', { target: 'c', risk: 60, findings: 12, hosts: 3, sev: [1, 2, 3, 3, 3] });
    // Peers A/o1, A/o2, A/o3, B/v, C/c: n = 5, other clients B, C = 2.
    expect(await probe()).toEqual(notEnough(5));
  });

  it('exactly 3 other clients: the percentile appears', async () => {
    const bizD = await createLicense(portal, { tier: 'business' });
    // D/d: risk 65, 6/3 = 2 per host (a tie), nothing critical or high: ratio 0.
    await upload('D-d', bizD, 'Delta', { target: 'd', risk: 65, findings: 6, hosts: 3, sev: [0, 0, 2, 2, 2] });
    // Peers A/o1, A/o2, A/o3, B/v (the low one), C/c, D/d: n = 6, other clients B, C, D = 3.
    expect(await probe()).toEqual({
      sample_size: 6,
      metrics: {
        // 10, 55, 70, 5, 60, 65: 4 worse (55, 70, 60, 65) of 6 → 66.7 → 67.
        risk_score: metric(50, 67, 'Above average', 6),
        // 1, 1.5, 3, 0.5, 4, 2: 2 worse (3, 4), 1 tie (2) of 6 → 2.5/6 = 41.7 → 42.
        findings_per_host: metric(2, 42, 'Average', 6),
        // 0, 1/6, 1/3, 0, 0.25, 0: 2 worse (1/3, 0.25) of 6 → 33.3 → 33.
        critical_high_ratio: metric(0.2, 33, 'Below average', 6),
      },
    });
  });
});
