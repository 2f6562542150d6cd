import { findingFingerprint } from '@svc/protocol/node';
import { POSTURE_COUNTS, POSTURE_FILTERS } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLicense,
  createScopedUser,
  FakeClock,
  heartbeatBody,
  type LicenseFixture,
  uniqueClientId,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, ADMIN_PASSWORD, login, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { type Doc, scanDocument } from '@svc/test-support/upload';

/**
 * GET /api/overview/posture against the real portal on a real database: per client and per
 * target, the open criticals and highs, overdue and KEV findings of record after uploads and
 * triage, each equal to what the portfolio (GET /api/findings/summary) counts with the filter
 * the console links to; the newest scan; the risk trend of each target on its own; stale
 * agents; and the scope of a customer user.
 */

const fp = (rule: string, host: string) => findingFingerprint({ rule_id: rule, host, port: 443, protocol: 'tcp' });

/** A scan of `target` with `n` findings on hosts 10.<net>.0.<i+1>: severities critical, high, medium, low in turn; the first is on the KEV list. */
function scan(sessionId: string, target: string, net: number, n: number): Doc {
  const sev = ['critical', 'high', 'medium', 'low'];
  const findings = Array.from({ length: n }, (_, i) => ({
    id: `f-${i}`,
    rule_id: `rule-${i}`,
    title: `Weakness ${i}`,
    severity: sev[i % 4],
    host: `10.${net}.0.${i + 1}`,
    port: 443,
    protocol: 'tcp',
    ...(i === 0 ? { kev: true, references: { cve: ['CVE-2024-3400'] } } : {}),
  }));
  return scanDocument(sessionId, target, findings, {});
}

describe('GET /api/overview/posture', () => {
  const clock = new FakeClock(new Date('2026-06-01T12:00:00.000Z'));
  let portal: TestPortal;
  let acme: LicenseFixture;
  let beta: LicenseFixture;
  let gamma: LicenseFixture;
  let cached: { token: string; at: number } | null = null;
  const admin = async () => {
    if (cached === null || clock.now().getTime() - cached.at > 30 * 60_000)
      cached = { token: await login(portal.url, ADMIN_EMAIL, ADMIN_PASSWORD), at: clock.now().getTime() };
    return cached.token;
  };
  const get = async (path: string, token?: string) =>
    http(portal.url, 'GET', path, { headers: withToken(token ?? (await admin())) });

  async function upload(key: string, doc: Doc) {
    const form = new FormData();
    form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
    const res = await fetch(`${portal.url}/api/upload`, { method: 'POST', headers: withKey(key), body: form });
    expect(res.status, await res.clone().text()).toBe(200);
  }
  async function bulk(client: string, target: string, fingerprints: string[], change: Doc) {
    const res = await http(portal.url, 'POST', '/api/findings/bulk', {
      headers: withToken(await admin()),
      json: { client_id: client, target, fingerprints, change },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ changed: fingerprints.length });
  }

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    acme = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
    beta = await createLicense(portal, { tier: 'msp', client_id: uniqueClientId('beta') });
    // gamma: an agent, and no scan yet.
    gamma = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('gamma') });
    // acme-net: criticals i=0 (KEV), 4, 8; highs 1, 5, 9. acme-dmz: a KEV critical and a high, scanned twice.
    await upload(acme.key, scan('20260501_120000', 'acme-net', 1, 10));
    await upload(acme.key, scan('20260501_130000', 'acme-dmz', 2, 2));
    await upload(acme.key, scan('20260510_130000', 'acme-dmz', 2, 2));
    await upload(beta.key, scan('20260515_120000', 'beta-net', 3, 4));
    const a = acme.record.client_id;
    // Triage: an exception on critical 4, a false positive on high 1, high 5 resolved by a person.
    await bulk(a, 'acme-net', [fp('rule-4', '10.1.0.5')], { exception: { reason: 'isolated', expiry: '2026-12-31' } });
    await bulk(a, 'acme-net', [fp('rule-1', '10.1.0.2')], {
      disposition: { disposition: 'false_positive', reason: 'decoy host' },
    });
    await bulk(a, 'acme-net', [fp('rule-5', '10.1.0.6')], { status: 'resolved' });
    // Agents: acme's first and gamma's are stale 11 minutes later, acme's second is online; beta's is online.
    const beat = async (key: string, id: string) =>
      expect(
        (await http(portal.url, 'POST', '/api/health', { headers: withKey(key), json: heartbeatBody(id) })).status,
      ).toBe(200);
    await beat(acme.key, 'acme-stale');
    await beat(gamma.key, 'gamma-stale');
    clock.advance(11 * 60_000);
    await beat(acme.key, 'acme-online');
    await beat(beta.key, 'beta-online');
  });
  afterAll(async () => {
    await portal?.close();
  });

  const at = (sid: string) => `${sid.slice(0, 4)}-${sid.slice(4, 6)}-${sid.slice(6, 8)}T12:00:00.000Z`;
  const scanOf = (sid: string) => ({ session_id: sid, scanned_at: at(sid) });

  it('counts per client and per target from the findings of record, worst first', async () => {
    const res = await get('/api/overview/posture');
    expect(res.status, res.text).toBe(200);
    expect(res.body.today).toBe('2026-06-01');
    expect(res.body.stale_threshold_seconds).toBe(600);
    const shape = res.body.clients.map((c: Doc) => ({
      client_id: c.client_id,
      counts: [c.critical, c.high, c.overdue, c.kev],
      last_scan: c.last_scan,
      stale_agents: c.stale_agents,
      targets: c.targets.map((t: Doc) => ({
        target: t.target,
        counts: [t.critical, t.high, t.overdue, t.kev],
        last_scan: t.last_scan,
      })),
    }));
    // Criticals 0 and 8 (4 has an exception); high 9 (1 is a false positive, 5 resolved); overdue:
    // those three (critical due after 15 days, high after 30, first seen 2026-05-01).
    expect(shape).toEqual([
      {
        client_id: acme.record.client_id,
        counts: [3, 2, 5, 2],
        last_scan: scanOf('20260510_130000'),
        stale_agents: 1,
        targets: [
          { target: 'acme-net', counts: [2, 1, 3, 1], last_scan: scanOf('20260501_120000') },
          { target: 'acme-dmz', counts: [1, 1, 2, 1], last_scan: scanOf('20260510_130000') },
        ],
      },
      {
        client_id: beta.record.client_id,
        // The high first seen 2026-05-15 is due 2026-06-14: not overdue yet.
        counts: [1, 1, 1, 1],
        last_scan: scanOf('20260515_120000'),
        stale_agents: 0,
        targets: [{ target: 'beta-net', counts: [1, 1, 1, 1], last_scan: scanOf('20260515_120000') }],
      },
      // No records yet, but an agent gone quiet: listed, last.
      { client_id: gamma.record.client_id, counts: [0, 0, 0, 0], last_scan: null, stale_agents: 1, targets: [] },
    ]);
  });

  it('each count is what the portfolio lists with the filter the console links to', async () => {
    const res = await get('/api/overview/posture');
    let checked = 0;
    for (const c of res.body.clients as Doc[]) {
      const places = [
        { client_id: c.client_id, counts: c },
        ...c.targets.map((t: Doc) => ({ client_id: c.client_id, target: t.target, counts: t })),
      ];
      for (const p of places) {
        for (const k of POSTURE_COUNTS) {
          const q = new URLSearchParams({
            client_id: p.client_id,
            ...(p.target === undefined ? {} : { target: p.target }),
            ...(POSTURE_FILTERS[k] as Record<string, string>),
          });
          const summary = await get(`/api/findings/summary?${q}`);
          expect(summary.status, summary.text).toBe(200);
          expect(summary.body.total, `${p.client_id} ${p.target ?? ''} ${k}`).toBe(p.counts[k]);
          checked++;
        }
      }
    }
    expect(checked).toBe(4 * 6);
  });

  it('each target has its own trend: its scored scans only, oldest first', async () => {
    const res = await get('/api/overview/posture');
    const acmeRow = res.body.clients.find((c: Doc) => c.client_id === acme.record.client_id);
    const trend = (t: string) => acmeRow.targets.find((x: Doc) => x.target === t).trend;
    expect(trend('acme-dmz').map((p: Doc) => p.session_id)).toEqual(['20260501_130000', '20260510_130000']);
    expect(trend('acme-net').map((p: Doc) => p.session_id)).toEqual(['20260501_120000']);
    // The score each point shows is the session's own, as the sessions listing states it.
    const sessions = await get(`/api/sessions?client_id=${acme.record.client_id}&target=acme-dmz`);
    const scoreOf = new Map(sessions.body.sessions.map((s: Doc) => [s.session_id, s.risk_score]));
    for (const p of trend('acme-dmz')) {
      expect(typeof p.risk_score).toBe('number');
      expect(p.risk_score).toBe(scoreOf.get(p.session_id));
      expect(p.scanned_at).toBe(at(p.session_id));
    }
  });

  it('a customer user sees their clients only; without health:agents no stale count', async () => {
    const acmeUser = await createScopedUser(portal, [acme.record.client_id]);
    const mine = await get('/api/overview/posture', acmeUser.token);
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.clients.map((c: Doc) => c.client_id)).toEqual([acme.record.client_id]);
    expect(mine.body.clients[0]).toMatchObject({ critical: 3, high: 2, overdue: 5, kev: 2, stale_agents: null });
    const betaUser = await createScopedUser(portal, [beta.record.client_id]);
    const theirs = await get('/api/overview/posture', betaUser.token);
    expect(theirs.body.clients.map((c: Doc) => [c.client_id, c.critical, c.stale_agents])).toEqual([
      [beta.record.client_id, 1, 0],
    ]);
  });

  it('no token is 401', async () => {
    const res = await http(portal.url, 'GET', '/api/overview/posture');
    expect(res.status).toBe(401);
    expect(typeof res.body.error).toBe('string');
  });
});
