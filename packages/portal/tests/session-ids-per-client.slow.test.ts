import fs from 'node:fs/promises';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createLicense, createScopedUser, uniqueClientId, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey, withToken, type HttpResult } from '@svc/test-support/http';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import { newSessionId, postUpload, sessionDoc, sessionParts, type Doc } from '@svc/test-support/upload';

/**
 * docs/api.md#ids-are-per-client: session ids are unique per client, not per portal. Two clients
 * whose scans finish in the same second both upload the same id; each key acts within its
 * own client; another client's session answers exactly like a missing one; a caller that
 * may see several clients names one with `client_id` or gets a 409 listing only the
 * clients it may see.
 */

const AMBIGUOUS = 'Session id is ambiguous: it exists under several clients; name one with client_id';

describe('session ids are unique per client', () => {
  let portal: TestPortal;
  let db: pg.Client;
  let admin: string;
  let keyA: LicenseFixture;
  let keyB: LicenseFixture;
  let keyC: LicenseFixture;
  const A = uniqueClientId('alpha');
  const B = uniqueClientId('beta');
  const C = uniqueClientId('gamma');

  const docOf = (id: string, target: string): Doc => {
    const doc = sessionDoc('session-complete.json', id);
    doc['metadata']['target'] = target;
    return doc;
  };
  async function upload(key: string, doc: Doc, log = 'log\n'): Promise<{ status: number; body: any }> {
    const res = await postUpload(
      portal.url,
      key,
      sessionParts(doc, { log, report: `<html><body>${doc['metadata']['target']}</body></html>` }),
    );
    return { status: res.status, body: res.body };
  }
  /** The same id uploaded by A, B and C (02:00 schedules finishing in the same second). */
  async function sameIdForAll(): Promise<string> {
    const id = newSessionId();
    for (const [key, client] of [
      [keyA, A],
      [keyB, B],
      [keyC, C],
    ] as const) {
      const res = await upload(key.key, docOf(id, `${client}.example`), `log of ${client}\n`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.message).toBe('Session uploaded');
    }
    return id;
  }
  const rows = async (id: string) =>
    (await db.query('SELECT client_id, files, status FROM sessions WHERE session_id = $1 ORDER BY client_id', [id]))
      .rows;

  usePortalWithDb(async (p) => {
    ({ portal, db } = p);
    admin = await portal.adminToken();
    keyA = await createLicense(portal, { tier: 'business', client_id: A });
    keyB = await createLicense(portal, { tier: 'business', client_id: B });
    keyC = await createLicense(portal, { tier: 'business', client_id: C });
  });

  it('two clients uploading the same id both succeed and stay separate', async () => {
    const id = newSessionId();
    const a = await upload(keyA.key, docOf(id, 'alpha.example'), 'log of A\n');
    const b = await upload(keyB.key, docOf(id, 'beta.example'), 'log of B\n');
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.share_token).not.toBe(b.body.share_token);
    expect((await rows(id)).map((r) => r.client_id)).toEqual([A, B].sort());

    for (const [key, target, log, token] of [
      [keyA.key, 'alpha.example', 'log of A\n', a.body.share_token],
      [keyB.key, 'beta.example', 'log of B\n', b.body.share_token],
    ] as const) {
      const json = await http(portal.url, 'GET', `/api/download?session=${id}`, { headers: withKey(key) });
      expect(json.status).toBe(200);
      expect(json.body.metadata.target).toBe(target);
      const logFile = await http(portal.url, 'GET', `/api/download?session=${id}&file=pipeline.log`, {
        headers: withKey(key),
      });
      expect(logFile.text).toBe(log);
      // Each share token opens its own client's session.
      const shared = await http(portal.url, 'GET', `/api/share?token=${token}`);
      expect(shared.body.target).toBe(target);
      const byToken = await http(portal.url, 'GET', `/api/download?session=${id}&file=pipeline.log&token=${token}`);
      expect(byToken.text).toBe(log);
    }

    // A re-upload by B replaces B's session only; under the same id another target of B is refused.
    const again = await upload(keyB.key, docOf(id, 'beta.example'), 'log of B, again\n');
    expect(again.body).toMatchObject({ message: 'Session replaced', share_token: b.body.share_token });
    const otherTarget = await upload(keyB.key, docOf(id, 'beta-2.example'), 'another target\n');
    expect(otherTarget.status).toBe(409);
    expect(otherTarget.body).toMatchObject({ conflict: 'session_target', target: 'beta.example' });
    expect(
      (await http(portal.url, 'GET', `/api/download?session=${id}`, { headers: withKey(keyA.key) })).body.metadata
        .target,
    ).toBe('alpha.example');

    // Blob paths separate the clients.
    for (const r of await rows(id)) {
      for (const f of Object.values(r.files as Record<string, { key: string }>))
        expect(f.key.startsWith(`sessions/c-${r.client_id}/`), f.key).toBe(true);
    }
  });

  it('concurrent uploads of one id: every client gets its own session, two keys of one client one session', async () => {
    for (let round = 0; round < 5; round++) {
      const id = newSessionId();
      const keyA2 = await createLicense(portal, { tier: 'business', client_id: A });
      const results = await Promise.all(
        // A's two keys upload the same scan (one target); B and C scans of their own.
        [keyA, keyA2, keyB, keyC].map((k, i) =>
          upload(k.key, docOf(id, `concurrent-${Math.max(1, i)}.example`), `log ${i}\n`),
        ),
      );
      expect(
        results.map((r) => r.status),
        JSON.stringify(results.map((r) => r.body)),
      ).toEqual([200, 200, 200, 200]);
      // A's two keys: one created the session, the other replaced it (same token).
      expect(
        results
          .slice(0, 2)
          .map((r) => r.body.message)
          .sort(),
      ).toEqual(['Session replaced', 'Session uploaded']);
      expect(results[0]!.body.share_token).toBe(results[1]!.body.share_token);
      expect(results.slice(2).map((r) => r.body.message)).toEqual(['Session uploaded', 'Session uploaded']);
      expect(new Set(results.map((r) => r.body.share_token)).size).toBe(3);
      const stored = await rows(id);
      expect(stored.map((r) => r.client_id)).toEqual([A, B, C].sort());
      expect(
        (await db.query('SELECT count(*)::int AS n FROM share_tokens WHERE session_id = $1', [id])).rows[0].n,
      ).toBe(3);
    }
  });

  it("another client's key gets exactly the answer of a missing id, on every endpoint", async () => {
    const id = newSessionId();
    expect((await upload(keyA.key, docOf(id, 'alpha.example'))).status).toBe(200);
    const missing = newSessionId();
    const before = await db.query('SELECT * FROM sessions WHERE session_id = $1', [id]);
    const requests: [string, string, (sid: string) => Record<string, unknown>][] = [
      ['GET', '/api/download?session=%s', () => ({})],
      ['GET', '/api/download?session=%s&file=pipeline.log', () => ({})],
      ['GET', '/api/benchmark?session=%s', () => ({})],
      ['PATCH', '/api/sessions?session=%s', () => ({ json: { status: 'archived', note: 'not mine' } })],
      ['DELETE', '/api/sessions?session=%s', () => ({})],
      [
        'PUT',
        '/api/refresh?session=%s&file=report.html',
        () => ({ body: '<p>not mine</p>', contentType: 'text/html' }),
      ],
    ];
    for (const [method, path, opts] of requests) {
      const send = async (sid: string): Promise<HttpResult> => {
        const o = opts(sid) as { json?: unknown; body?: string; contentType?: string };
        const headers: Record<string, string> = {
          ...withKey(keyB.key),
          ...(o.contentType ? { 'content-type': o.contentType } : {}),
        };
        return http(portal.url, method, path.replace('%s', sid), {
          headers,
          ...(o.json ? { json: o.json } : {}),
          ...(o.body ? { body: o.body } : {}),
        });
      };
      const other = await send(id);
      const none = await send(missing);
      // A key never changes a review status: refused before any lookup, the same for every id.
      const expected =
        method === 'PATCH'
          ? [
              403,
              {
                error:
                  'A key cannot archive a session: archiving takes an identity token (X-Identity-Token) with update:status',
              },
            ]
          : [404, { error: 'Session not found' }];
      expect([other.status, other.body], `${method} ${path}`).toEqual(expected);
      expect([other.status, other.body], `${method} ${path}`).toEqual([none.status, none.body]);
      // Naming the owner's client explicitly changes nothing.
      const named = await http(
        portal.url,
        method === 'PUT' ? 'GET' : method,
        `${path.replace('%s', id).replace('/api/refresh', '/api/download')}&client_id=${A}`,
        {
          headers: withKey(keyB.key),
          ...(method === 'PATCH' ? { json: { status: 'archived' } } : {}),
        },
      );
      expect([named.status, named.body], `${method} ${path} client_id=A`).toEqual(expected);
    }
    // A scoped user of B: the same, on the detail and the remediation update too.
    const userB = await createScopedUser(portal, [B]);
    const detail = await http(portal.url, 'GET', `/api/sessions?session=${id}`, { headers: withToken(userB.token) });
    expect([detail.status, detail.body]).toEqual([404, { error: 'Session not found' }]);
    const remediation = await http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(userB.token),
      json: { session_id: id, items: [{ title: 'SMBv1 enabled', status: 'resolved' }] },
    });
    expect([remediation.status, remediation.body]).toEqual([404, { error: 'Session not found' }]);
    expect((await db.query('SELECT * FROM sessions WHERE session_id = $1', [id])).rows).toEqual(before.rows);
    expect(
      (await db.query('SELECT count(*)::int AS n FROM status_history WHERE session_id = $1', [id])).rows[0].n,
    ).toBe(0);
  });

  it('an admin naming an ambiguous id gets 409 with the client list, and succeeds with client_id', async () => {
    const id = await sameIdForAll();
    const h = withToken(admin);
    const ambiguous = { error: AMBIGUOUS, client_ids: [A, B, C].sort() };
    const reads = [`/api/sessions?session=${id}`, `/api/download?session=${id}`, `/api/benchmark?session=${id}`];
    for (const path of reads) {
      const res = await http(portal.url, 'GET', path, { headers: h });
      expect([res.status, res.body], path).toEqual([409, ambiguous]);
      const named = await http(portal.url, 'GET', `${path}&client_id=${B}`, { headers: h });
      expect(named.status, `${path} ${named.text}`).toBe(200);
    }
    expect(
      (await http(portal.url, 'GET', `/api/sessions?session=${id}&client_id=${B}`, { headers: h })).body.session
        .client_id,
    ).toBe(B);
    expect(
      (await http(portal.url, 'GET', `/api/download?session=${id}&client_id=${C}`, { headers: h })).body.metadata
        .target,
    ).toBe(`${C}.example`);

    // Changes: refused whole while ambiguous, applied to the named client only.
    const patch = await http(portal.url, 'PATCH', `/api/sessions?session=${id}`, {
      headers: h,
      json: { status: 'resolved', note: 'which one?' },
    });
    expect([patch.status, patch.body]).toEqual([409, ambiguous]);
    const remediationBody = { session_id: id, items: [{ title: 'SMBv1 enabled', status: 'in_progress' }] };
    const rem = await http(portal.url, 'PATCH', '/api/remediation-update', { headers: h, json: remediationBody });
    expect([rem.status, rem.body]).toEqual([409, ambiguous]);
    const del = await http(portal.url, 'DELETE', `/api/sessions?session=${id}`, { headers: h });
    expect([del.status, del.body]).toEqual([409, ambiguous]);
    const legacyRefresh = await http(portal.url, 'PUT', `/api/refresh?session=${id}&file=report.html`, {
      headers: { ...withKey(LEGACY_KEY), 'content-type': 'text/html' },
      body: '<p>x</p>',
    });
    expect([legacyRefresh.status, legacyRefresh.body]).toEqual([409, ambiguous]);
    expect((await db.query('SELECT count(*)::int AS n FROM session_notes WHERE session_id = $1', [id])).rows[0].n).toBe(
      0,
    );
    expect((await rows(id)).map((r) => r.status)).toEqual(['new', 'new', 'new']);

    const patched = await http(portal.url, 'PATCH', `/api/sessions?session=${id}&client_id=${B}`, {
      headers: h,
      json: { status: 'resolved', note: 'B only' },
    });
    expect(patched.status, patched.text).toBe(200);
    expect((await rows(id)).map((r) => [r.client_id, r.status])).toEqual(
      [
        [A, 'new'],
        [B, 'resolved'],
        [C, 'new'],
      ].sort(),
    );
    const audit = (
      await db.query(
        "SELECT client_id, data FROM audit_events WHERE event_type = 'status_changed' AND session_id = $1",
        [id],
      )
    ).rows;
    expect(audit.map((r) => [r.client_id, r.data.client_id])).toEqual([[B, B]]);
    expect(
      (
        await http(portal.url, 'PATCH', '/api/remediation-update', {
          headers: h,
          json: { ...remediationBody, client_id: C },
        })
      ).body.changed,
    ).toBe(1);
    const refreshed = await http(portal.url, 'PUT', `/api/refresh?session=${id}&file=report.html&client_id=${A}`, {
      headers: { ...withKey(LEGACY_KEY), 'content-type': 'text/html' },
      body: '<p>new A</p>',
    });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(
      (await http(portal.url, 'GET', `/api/download?session=${id}&file=report.html&client_id=${A}`, { headers: h }))
        .text,
    ).toBe('<p>new A</p>');
    expect(
      (await http(portal.url, 'DELETE', `/api/sessions?session=${id}&client_id=${C}`, { headers: h })).status,
    ).toBe(200);
    expect((await rows(id)).map((r) => r.client_id)).toEqual([A, B].sort());
    // With two left, still ambiguous: the list shrinks with them.
    const now = await http(portal.url, 'GET', `/api/download?session=${id}`, { headers: h });
    expect([now.status, now.body]).toEqual([409, { error: AMBIGUOUS, client_ids: [A, B].sort() }]);
  });

  it('a scoped user sees only its clients: no 409 that would reveal another client', async () => {
    const id = await sameIdForAll();
    const userA = await createScopedUser(portal, [A]);
    const res = await http(portal.url, 'GET', `/api/sessions?session=${id}`, { headers: withToken(userA.token) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.session.client_id).toBe(A);
    expect(
      (await http(portal.url, 'GET', `/api/download?session=${id}`, { headers: withToken(userA.token) })).body.metadata
        .target,
    ).toBe(`${A}.example`);
    // Naming a client outside the scope is a 404, like a missing id.
    const named = await http(portal.url, 'GET', `/api/sessions?session=${id}&client_id=${B}`, {
      headers: withToken(userA.token),
    });
    expect([named.status, named.body]).toEqual([404, { error: 'Session not found' }]);

    // A user of A and B: the 409 lists A and B, never C.
    const userAB = await createScopedUser(portal, [A, B]);
    const both = await http(portal.url, 'GET', `/api/download?session=${id}`, { headers: withToken(userAB.token) });
    expect([both.status, both.body]).toEqual([409, { error: AMBIGUOUS, client_ids: [A, B].sort() }]);
    const patch = await http(portal.url, 'PATCH', `/api/sessions?session=${id}`, {
      headers: withToken(userAB.token),
      json: { status: 'archived' },
    });
    expect([patch.status, patch.body]).toEqual([409, { error: AMBIGUOUS, client_ids: [A, B].sort() }]);
    expect(
      (
        await http(portal.url, 'GET', `/api/download?session=${id}&client_id=${B}`, {
          headers: withToken(userAB.token),
        })
      ).body.metadata.target,
    ).toBe(`${B}.example`);

    // A key never sees an ambiguity: it acts within its client.
    expect((await http(portal.url, 'GET', `/api/benchmark?session=${id}`, { headers: withKey(keyC.key) })).status).toBe(
      200,
    );
  });

  it('the listing shows each client’s session, and its cursor pages through equal ids', async () => {
    const id = await sameIdForAll();
    const seen: { session_id: string; client_id: string }[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 50; page++) {
      const res: HttpResult = await http(
        portal.url,
        'GET',
        `/api/sessions?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { headers: withToken(admin) },
      );
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.sessions);
      cursor = res.body.next_cursor;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    const all = (await db.query('SELECT session_id, client_id FROM sessions')).rows;
    expect(seen).toHaveLength(all.length);
    expect(new Set(seen.map((s) => `${s.client_id}/${s.session_id}`)).size).toBe(all.length);
    expect(
      seen
        .filter((s) => s.session_id === id)
        .map((s) => s.client_id)
        .sort(),
    ).toEqual([A, B, C].sort());
  });

  it('sessions uploaded without a client have a namespace of their own, named by an empty client_id', async () => {
    const id = newSessionId();
    const doc = docOf(id, 'nobody.example');
    delete doc['metadata']['client_id'];
    const legacy = await upload(LEGACY_KEY, doc);
    expect(legacy.status).toBe(200);
    expect((await upload(keyA.key, docOf(id, 'alpha.example'))).status).toBe(200);
    expect((await rows(id)).map((r) => r.client_id)).toEqual(['', A]);
    const res = await http(portal.url, 'GET', `/api/download?session=${id}`, { headers: withToken(admin) });
    expect([res.status, res.body]).toEqual([409, { error: AMBIGUOUS, client_ids: [null, A] }]);
    const none = await http(portal.url, 'GET', `/api/sessions?session=${id}&client_id=`, { headers: withToken(admin) });
    expect(none.status, none.text).toBe(200);
    expect(none.body.session).toMatchObject({ client_id: null, target: 'nobody.example' });
    // Keys and scoped users never see it.
    expect(
      (await http(portal.url, 'GET', `/api/download?session=${id}`, { headers: withKey(keyA.key) })).body.metadata
        .target,
    ).toBe('alpha.example');
    const bad = await http(portal.url, 'GET', `/api/download?session=${id}&client_id=../x`, {
      headers: withToken(admin),
    });
    expect(bad.status).toBe(400);
  });
});

/** Sessions without a client are stored under '' since docs/api.md#ids-are-per-client; every count treats them as "no client", as before. */
describe('sessions without a client count as no client', () => {
  let portal: TestPortal;
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it('in the benchmark privacy minimum and in db-health by_client', async () => {
    portal = await startTestPortal();
    const admin = await portal.adminToken();
    const upload = async (key: string, target: string, client?: string | null) => {
      const doc = sessionDoc('session-complete.json', newSessionId());
      doc['metadata']['target'] = target;
      if (client === null) delete doc['metadata']['client_id'];
      else if (client !== undefined) doc['metadata']['client_id'] = client;
      const res = await postUpload(portal.url, key, sessionParts(doc));
      expect(res.status, res.text).toBe(200);
      return res.body.session_id as string;
    };
    const a = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('a') });
    const probe = await upload(a.key, 'probe.example');
    // Peers: two other clients and one session without a client: three peers, two other clients.
    for (const label of ['b', 'c'])
      await upload(
        (await createLicense(portal, { tier: 'business', client_id: uniqueClientId(label) })).key,
        `${label}.example`,
      );
    await upload(LEGACY_KEY, 'nobody.example', null);
    const bench = await http(portal.url, 'GET', `/api/benchmark?session=${probe}`, { headers: withKey(a.key) });
    expect(bench.status, bench.text).toBe(200);
    expect(bench.body.sample_size).toBe(3);
    expect(bench.body.metrics.risk_score.label).toBe('Not enough peers');

    const health = await http(portal.url, 'GET', '/api/db-health', { headers: withToken(admin) });
    expect(health.status, health.text).toBe(200);
    const byClient = health.body.session_stats.by_client as { client_id: string | null; count: number }[];
    expect(byClient.filter((c) => c.client_id === null)).toEqual([
      expect.objectContaining({ client_id: null, count: 1 }),
    ]);
    expect(byClient.some((c) => c.client_id === '')).toBe(false);
  });
});
