import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, createScopedUser, type ScopedUser, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { type Doc, postUpload, sessionParts } from '@svc/test-support/upload';

/**
 * GET /api/sessions' search, sort, upload range and total, and GET /api/sessions/clients,
 * against the real portal on a real database: exact rows in exact order for each parameter,
 * 400 for bad values. the filters (client_id, status, exact target) keep their meaning.
 */

interface Planted {
  id: string;
  key: 'a' | 'b' | 'c';
  client: string;
  target: string;
  risk: number | null;
  finishedAt: string | null;
}

// Uploaded in this order, one after another.
const PLANTED: Planted[] = [
  {
    id: '20260105_000001',
    key: 'a',
    client: 'Acme Water',
    target: '192.168.1.0/24',
    risk: 62,
    finishedAt: '2026-01-05T10:00:00Z',
  },
  {
    id: '20260101_000002',
    key: 'a',
    client: 'Acme Water',
    target: '10.0.0.0/8',
    risk: 30,
    finishedAt: '2026-01-01T10:00:00Z',
  },
  {
    id: '20260103_000003',
    key: 'b',
    client: 'Beta Corp',
    target: 'WEB.beta.example',
    risk: 80,
    finishedAt: '2026-01-03T10:00:00Z',
  },
  { id: '20260104_000004', key: 'b', client: 'Beta Corp', target: 'mail.beta.example', risk: null, finishedAt: null },
  { id: '20260102_000005', key: 'c', client: 'Gamma Labs', target: 'lab_1%.example', risk: 10, finishedAt: null },
];
const [A1, A2, B1, B2, C1] = PLANTED.map((p) => p.id) as [string, string, string, string, string];

function docOf(p: Planted): Doc {
  return {
    metadata: {
      session_id: p.id,
      target: p.target,
      client: p.client,
      ...(p.finishedAt === null ? {} : { finished_at: p.finishedAt }),
    },
    ...(p.risk === null ? {} : { summary: { risk_score: p.risk, risk_grade: 'C' } }),
    findings: [],
  };
}

describe('GET /api/sessions: search, sort, range, total', () => {
  let portal: TestPortal;
  let admin: string;
  let scoped: ScopedUser;
  const clients = { a: uniqueClientId('acme'), b: uniqueClientId('beta'), c: uniqueClientId('gamma') };
  const uploadedAt = new Map<string, string>();

  beforeAll(async () => {
    portal = await startTestPortal();
    admin = await portal.adminToken();
    const keys = {
      a: (await createLicense(portal, { client_id: clients.a })).key,
      b: (await createLicense(portal, { client_id: clients.b })).key,
      c: (await createLicense(portal, { client_id: clients.c })).key,
    };
    for (const p of PLANTED) {
      const res = await postUpload(portal.url, keys[p.key], sessionParts(docOf(p)));
      if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    }
    scoped = await createScopedUser(portal, [clients.a]);
    for (const s of (await list('limit=200')).body.sessions) uploadedAt.set(s.session_id, s.uploaded_at);
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  const list = (query: string, token = admin) =>
    http(portal.url, 'GET', `/api/sessions?${query}`, { headers: withToken(token) });
  const ids = async (query: string, token = admin) => {
    const res = await list(query, token);
    expect(res.status, res.text).toBe(200);
    return res.body.sessions.map((s: { session_id: string }) => s.session_id) as string[];
  };

  it('q: a case-insensitive part of the target, client name or client id; % and _ are literal', async () => {
    expect(await ids('q=192.168')).toEqual([A1]);
    expect(await ids('q=ACME')).toEqual([A2, A1]);
    expect(await ids('q=beta')).toEqual([B2, B1]);
    expect(await ids('q=web.BETA')).toEqual([B1]);
    expect(await ids(`q=${encodeURIComponent(clients.c.toUpperCase())}`)).toEqual([C1]);
    expect(await ids(`q=${encodeURIComponent('%')}`)).toEqual([C1]);
    expect(await ids('q=_')).toEqual([C1]);
    expect(await ids(`q=${encodeURIComponent('1%.')}`)).toEqual([C1]);
    expect(await ids('q=nothing-like-this')).toEqual([]);
    // Within the user's scope only.
    expect(await ids('q=beta', scoped.token)).toEqual([]);
    expect(await ids('q=acme', scoped.token)).toEqual([A2, A1]);
  });

  it('target stays an exact, case-sensitive filter; client_id and status filter as before', async () => {
    expect(await ids('target=192.168')).toEqual([]);
    expect(await ids(`target=${encodeURIComponent('192.168.1.0/24')}`)).toEqual([A1]);
    expect(await ids('target=web.beta.example')).toEqual([]);
    expect(await ids(`client_id=${clients.b}`)).toEqual([B2, B1]);
    expect(await ids(`client_id=${clients.b}&q=mail`)).toEqual([B2]);
    expect(await ids('status=new&q=gamma')).toEqual([C1]);
  });

  it('sort and order: every column, both directions, ties by session id', async () => {
    expect(await ids('sort=risk_score')).toEqual([B1, A1, A2, C1, B2]);
    expect(await ids('sort=risk_score&order=asc')).toEqual([B2, C1, A2, A1, B1]);
    expect(await ids('sort=target&order=asc')).toEqual([A2, A1, C1, B2, B1]);
    expect(await ids('sort=client&order=asc')).toEqual([A2, A1, B1, B2, C1]);
    expect(await ids('sort=client&order=desc')).toEqual([C1, B2, B1, A1, A2]);
    // No scan time in the file: the upload time counts.
    expect(await ids('sort=scanned_at&order=asc')).toEqual([A2, B1, A1, B2, C1]);
    expect(await ids('sort=uploaded_at&order=asc')).toEqual([A1, A2, B1, B2, C1]);
    expect(await ids('sort=uploaded_at')).toEqual([C1, B2, B1, A2, A1]);
    const res = await list('sort=scanned_at&order=asc&limit=1');
    expect(res.body.sessions[0].scanned_at).toBe('2026-01-01T10:00:00.000Z');
  });

  it('sort=status follows review order; the listing shows the changed status', async () => {
    const patch = (id: string, status: string) =>
      http(portal.url, 'PATCH', `/api/sessions?session=${id}`, { headers: withToken(admin), json: { status } });
    expect((await patch(B1, 'in_review')).status).toBe(200);
    expect((await patch(A1, 'resolved')).status).toBe(200);
    expect(await ids('sort=status&order=asc')).toEqual([A2, C1, B2, B1, A1]);
    expect(await ids('sort=status&order=desc')).toEqual([A1, B1, B2, C1, A2]);
    expect((await patch(B1, 'new')).status).toBe(200);
    expect((await patch(A1, 'new')).status).toBe(200);
  });

  it('a sorted listing pages by cursor: every session once, in order; total counts every page', async () => {
    for (const [sort, order, expected] of [
      ['risk_score', 'asc', [B2, C1, A2, A1, B1]],
      ['target', 'desc', [B1, B2, C1, A1, A2]],
      ['client', 'asc', [A2, A1, B1, B2, C1]],
      ['scanned_at', 'desc', [C1, B2, A1, B1, A2]],
    ] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 10; i++) {
        const res = await list(
          `sort=${sort}&order=${order}&limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        );
        expect(res.status, res.text).toBe(200);
        expect(res.body.total).toBe(5);
        seen.push(...res.body.sessions.map((s: { session_id: string }) => s.session_id));
        cursor = res.body.next_cursor;
        if (cursor === null) break;
      }
      expect(seen, `${sort} ${order}`).toEqual(expected);
    }
  });

  it('total: the matching sessions over every page, within scope', async () => {
    expect((await list('limit=1')).body.total).toBe(5);
    expect((await list('limit=1&q=beta')).body.total).toBe(2);
    expect((await list('limit=1', scoped.token)).body.total).toBe(2);
    expect((await list('q=zzz')).body).toEqual({ sessions: [], next_cursor: null, total: 0 });
  });

  it('uploaded_from and uploaded_to: inclusive bounds on the upload time', async () => {
    const at = (id: string) => uploadedAt.get(id) as string;
    expect(await ids(`uploaded_from=${encodeURIComponent(at(B1))}`)).toEqual([C1, B2, B1]);
    expect(await ids(`uploaded_to=${encodeURIComponent(at(A2))}`)).toEqual([A2, A1]);
    expect(
      await ids(
        `uploaded_from=${encodeURIComponent(at(A2))}&uploaded_to=${encodeURIComponent(at(B2))}&sort=risk_score`,
      ),
    ).toEqual([B1, A2, B2]);
  });

  it('bad values are 400 with the error body, never a 500', async () => {
    const riskCursor = (await list('sort=risk_score&limit=1')).body.next_cursor as string;
    const defaultCursor = (await list('limit=1')).body.next_cursor as string;
    for (const query of [
      'sort=size',
      'sort=',
      'order=up',
      'q=',
      `q=${'x'.repeat(201)}`,
      'uploaded_from=yesterday',
      'uploaded_to=2026-13-45T00:00:00Z',
      'cursor=not-a-cursor',
      `sort=target&cursor=${riskCursor}`,
      `sort=risk_score&order=asc&cursor=${riskCursor}`,
      `sort=risk_score&cursor=${defaultCursor}`,
      `cursor=${riskCursor}`,
      `sort=risk_score&cursor=${Buffer.from(JSON.stringify(['s', 'risk_score', 'desc', 'high', A1, clients.a])).toString('base64url')}`,
      'unknown=1',
    ]) {
      const res = await list(query);
      expect(res.status, query).toBe(400);
      expect(typeof res.body.error, query).toBe('string');
    }
    // A NUL cannot match any stored text: refused like every other input with one, never a 500.
    expect((await list(`q=${encodeURIComponent('a\u0000b')}`)).status).toBe(400);
  });
});

describe('GET /api/sessions/clients', () => {
  let portal: TestPortal;

  beforeAll(async () => {
    portal = await startTestPortal();
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it('the clients with sessions in the caller scope, their newest name and session count', async () => {
    const a = uniqueClientId('acme');
    const b = uniqueClientId('beta');
    const ka = (await createLicense(portal, { client_id: a })).key;
    const kb = (await createLicense(portal, { client_id: b })).key;
    const up = (key: string, p: Partial<Planted> & { id: string }) =>
      postUpload(
        portal.url,
        key,
        sessionParts(docOf({ key: 'a', client: 'x', target: 't', risk: 1, finishedAt: null, ...p })),
      );
    expect((await up(ka, { id: '20260101_000001', client: 'Acme Old' })).status).toBe(200);
    expect((await up(ka, { id: '20260101_000002', client: 'Acme Water' })).status).toBe(200);
    expect((await up(kb, { id: '20260101_000003', client: 'Beta Corp' })).status).toBe(200);
    const admin = await portal.adminToken();
    const res = await http(portal.url, 'GET', '/api/sessions/clients', { headers: withToken(admin) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      clients: [
        { client_id: a, client: 'Acme Water', sessions: 2 },
        { client_id: b, client: 'Beta Corp', sessions: 1 },
      ].sort((x, y) => (x.client_id < y.client_id ? -1 : 1)),
    });
    const scoped = await createScopedUser(portal, [b]);
    expect((await http(portal.url, 'GET', '/api/sessions/clients', { headers: withToken(scoped.token) })).body).toEqual(
      {
        clients: [{ client_id: b, client: 'Beta Corp', sessions: 1 }],
      },
    );
    expect((await http(portal.url, 'GET', '/api/sessions/clients')).status).toBe(401);
    expect((await http(portal.url, 'GET', '/api/sessions/clients?x=1', { headers: withToken(admin) })).status).toBe(
      400,
    );
  });
});
