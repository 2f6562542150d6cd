import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findInputProblem } from '../src/http/input-rules.ts';
import { createLicense, openDb, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { blobObjects, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * One rule at the edge for every route. A NUL (or a lone surrogate) in
 * any string and JSON nested deeper than SVC_MAX_JSON_DEPTH are a 400 naming the field,
 * never a 500 from PostgreSQL or a stack overflow.
 */

const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

describe('findInputProblem', () => {
  it('finds NUL and lone surrogates in values and field names, with the path', () => {
    expect(findInputProblem({ a: [1, 'x\u0000y'] }, 64)).toEqual({
      path: 'a.1',
      message: 'field contains a NUL character',
    });
    expect(findInputProblem({ a: { b: '\uD800' } }, 64)).toEqual({
      path: 'a.b',
      message: 'field contains an unpaired UTF-16 surrogate',
    });
    expect(findInputProblem({ a: { b: 'x\uDC00' } }, 64)?.message).toBe('field contains an unpaired UTF-16 surrogate');
    expect(findInputProblem({ ['k\u0000']: 1 }, 64)).toEqual({
      path: '',
      message: 'field name contains a NUL character',
    });
    // Session files keep such strings (stored as sent; derived metadata drops them): depth only.
    expect(findInputProblem({ a: 'x\u0000', ['k\u0000']: 1 }, 64, { strings: false })).toBeNull();
    // A raw body (PUT /api/refresh reads HTML as bytes) is the route's own business.
    expect(findInputProblem(Buffer.from('a\u0000b'), 64)).toBeNull();
    expect(findInputProblem({ ok: 'emoji \uD83D\uDE00 and \u2028' }, 64)).toBeNull();
  });

  it('counts depth without recursion, up to 1,000,000 levels', () => {
    expect(findInputProblem(JSON.parse(deep(64)), 64)).toBeNull();
    expect(findInputProblem(JSON.parse(deep(65)), 64)?.message).toBe('JSON is nested too deep (more than 64 levels)');
    expect(findInputProblem(JSON.parse(deep(1_000_000)), 64)?.message).toBe(
      'JSON is nested too deep (more than 64 levels)',
    );
  });
});

describe('a real portal refuses unstorable input with a 400', () => {
  let portal: TestPortal;
  let token: string;
  beforeAll(async () => {
    portal = await startTestPortal();
    token = await portal.adminToken();
  });
  afterAll(() => portal.close());

  it('NUL in license name, description and id', async () => {
    const create = await http(portal.url, 'POST', '/api/licenses', {
      headers: withToken(token),
      json: { tier: 'professional', client_id: uniqueClientId(), name: 'a\u0000b' },
    });
    expect(create.status).toBe(400);
    expect(create.body).toEqual({ error: 'Invalid body: field contains a NUL character (at name)' });
    const desc = await http(portal.url, 'POST', '/api/licenses', {
      headers: withToken(token),
      json: { tier: 'professional', client_id: uniqueClientId(), name: 'n', description: '\u0000' },
    });
    expect(desc.status).toBe(400);
    expect(desc.body).toEqual({ error: 'Invalid body: field contains a NUL character (at description)' });
    const patch = await http(portal.url, 'PATCH', '/api/licenses?id=x%00y', {
      headers: withToken(token),
      json: { action: 'revoke' },
    });
    expect(patch.status).toBe(400);
    expect(patch.body).toEqual({ error: 'Invalid query: field contains a NUL character (at id)' });
    const del = await http(portal.url, 'DELETE', '/api/licenses?id=%00', { headers: withToken(token) });
    expect(del.status).toBe(400);
  });

  it('NUL in webhook, delivery and ping ids and in user id and e-mail; a lone surrogate anywhere', async () => {
    for (const [method, path, json] of [
      ['PATCH', '/api/webhooks?id=%00', { description: 'x' }],
      ['DELETE', '/api/webhooks?id=%00', undefined],
      [
        'POST',
        '/api/webhooks',
        { url: 'https://example.com/hook', events: ['session.uploaded'], description: 'd\u0000' },
      ],
      ['GET', '/api/webhooks/deliveries?webhook_id=%00', undefined],
      ['POST', '/api/webhooks/ping?id=%00', undefined],
      ['POST', '/api/licenses', { tier: 'professional', client_id: uniqueClientId(), name: '\uD800' }],
    ] as const) {
      const res = await http(portal.url, method, path, { headers: withToken(token), json });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.error, `${method} ${path}`).toMatch(
        /^Invalid (query|body): field contains (a NUL character|an unpaired UTF-16 surrogate)/,
      );
    }
    const user = await http(portal.url, 'POST', '/identity/admin/users', {
      headers: { authorization: `Bearer ${token}` },
      json: { email: 'a\u0000@example.com', password: 'long-enough-password', role: 'admin' },
    });
    expect(user.status).toBe(400);
    expect(user.body).toEqual({ error: 'Invalid body: field contains a NUL character (at email)' });
    const patchUser = await http(portal.url, 'PATCH', '/identity/admin/users?id=%00', {
      headers: { authorization: `Bearer ${token}` },
      json: { role: 'admin' },
    });
    expect(patchUser.status).toBe(400);
    expect(patchUser.body).toEqual({ error: 'Invalid query: field contains a NUL character (at id)' });
    // The OAuth endpoint keeps RFC 6749's format: deep JSON is an invalid_request (an unstorable username is its own invalid_grant).
    const grant = await http(portal.url, 'POST', '/identity/token', {
      headers: { 'content-type': 'application/json' },
      body: `{"grant_type":"password","username":${deep(50_000)},"password":"pw"}`,
    });
    expect(grant.status).toBe(400);
    expect(grant.body.error).toBe('invalid_request');
  });

  it('a JSON body nested 50,000 deep is a 400, not a stack overflow', async () => {
    const body = `{"tier":"professional","client_id":"c","name":"n","description":${deep(50_000)}}`;
    const res = await http(portal.url, 'POST', '/api/licenses', {
      headers: { ...withToken(token), 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: `Invalid body: JSON is nested too deep (more than 64 levels) (at ${`description${'.0'.repeat(100)}`.slice(0, 117)}...)`,
    });
  });

  it('an uploaded session file nested 50,000 deep is a 400 and nothing is stored', async () => {
    const { key } = await createLicense(portal);
    const before = await blobObjects(portal.dataDir);
    const doc = sessionDoc('session-minimal.json');
    const text = JSON.stringify(doc).replace(/}$/, `,"extra":${deep(50_000)}}`);
    const res = await postUpload(portal.url, key, sessionParts(text));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: `Invalid session_json: JSON is nested too deep (more than 64 levels) (at ${`extra${'.0'.repeat(100)}`.slice(0, 117)}...)`,
    });

    expect(await blobObjects(portal.dataDir)).toEqual(before);
    const db = await openDb(portal);
    try {
      const { rows } = await db.query('SELECT count(*)::int AS n FROM sessions WHERE session_id = ANY($1)', [
        [doc['metadata']['session_id']],
      ]);
      expect(rows[0].n).toBe(0);
    } finally {
      await db.end();
    }
    // The key itself is fine: a clean upload from it succeeds.
    const ok = await postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json')));
    expect(ok.status).toBe(200);
  });
});
