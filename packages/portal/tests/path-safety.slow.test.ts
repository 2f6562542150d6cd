import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobStore } from '../src/blobs/store.ts';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import {
  blobObjects,
  blobTmp,
  postUpload,
  rawRequest,
  sessionDoc,
  sessionParts,
  type RawResponse,
} from '@svc/test-support/upload';

/**
 * Path safety (docs/session-file.md#the-session-id: ids are validated against ^[a-zA-Z0-9_-]+$ so
 * they cannot traverse): every session id parameter of the session endpoints refuses
 * traversal in all its spellings with 400, before the blob store is touched. The values
 * below are written exactly as they travel in the query string (the server decodes once).
 */

const BAD_IDS: [label: string, raw: string][] = [
  ['../x', '../x'],
  ['..%2Fx (encoded slash)', '..%2Fx'],
  ['%2e%2e%2fx (all encoded)', '%2e%2e%2fx'],
  ['%252e%252e%252f (double-encoded)', '%252e%252e%252f'],
  ['%252e%252e%252fx (double-encoded)', '%252e%252e%252fx'],
  ['..\\x (raw backslash)', '..\\x'],
  ['..%5Cx (encoded backslash)', '..%5Cx'],
  ['%5C%5Chost%5Cshare (UNC)', '%5C%5Chost%5Cshare'],
  ['x%00 (NUL)', 'x%00'],
  ['%00 (NUL only)', '%00'],
  ['x%00.json', 'x%00.json'],
  ['empty', ''],
  ['10,000 characters', 'a'.repeat(10_000)],
  ['..', '..'],
  ['. (dot)', '.'],
  ['a/b', 'a/b'],
  ['/etc/passwd', '%2Fetc%2Fpasswd'],
  ['overlong UTF-8 dot', '%c0%ae%c0%ae%2fx'],
  ['space', 'x%20y'],
  ['newline', 'x%0Ay'],
  ['unicode', '%C3%A9'],
];

interface Endpoint {
  name: string;
  method: string;
  url: string;
  request(raw: string): Promise<RawResponse>;
}

describe('session id path safety', () => {
  let portal: TestPortal;
  let admin: string;
  const blobCalls: string[] = [];
  let sentinels: string[];
  let endpoints: Endpoint[];

  beforeAll(async () => {
    portal = await startTestPortal();
    admin = await portal.adminToken();
    // A real session named "x", the target of every ../x above.
    const up = await postUpload(
      portal.url,
      LEGACY_KEY,
      sessionParts(sessionDoc('session-complete.json', 'x'), { log: 'log\n', report: '<html><body>r</body></html>' }),
    );
    expect(up.status).toBe(200);
    // Files where a traversal would land.
    sentinels = [
      path.join(portal.dataDir, 'x'),
      path.join(portal.dataDir, 'blobs', 'x'),
      path.join(portal.dataDir, 'blobs', 'objects', 'sessions', 'x'),
    ];
    for (const f of sentinels) await fs.writeFile(f, 'sentinel');

    // Record every blob store call from here on.
    const blobs = portal.ctx.blobs as BlobStore & Record<string, unknown>;
    for (const method of ['get', 'put', 'delete', 'sweep'] as const) {
      const original = blobs[method].bind(blobs) as (...args: unknown[]) => unknown;
      blobs[method] = ((...args: unknown[]) => {
        blobCalls.push(`${method} ${JSON.stringify(args[0])}`);
        return original(...args);
      }) as never;
    }

    const jwt = { 'x-identity-token': admin };
    const send = (method: string, pathAndQuery: string, headers: Record<string, string>, body?: string) =>
      rawRequest(`${portal.url}${pathAndQuery}`, {
        method,
        headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : Buffer.from(body),
      });
    endpoints = [
      {
        name: 'GET /api/sessions?session=',
        method: 'GET',
        url: '/api/sessions',
        request: (id) => send('GET', `/api/sessions?session=${id}`, jwt),
      },
      {
        name: 'PATCH /api/sessions?session=',
        method: 'PATCH',
        url: '/api/sessions',
        request: (id) =>
          send('PATCH', `/api/sessions?session=${id}`, jwt, JSON.stringify({ status: 'archived', note: 'n' })),
      },
      {
        name: 'DELETE /api/sessions?session=',
        method: 'DELETE',
        url: '/api/sessions',
        request: (id) => send('DELETE', `/api/sessions?session=${id}`, jwt),
      },
      {
        name: 'GET /api/download?session= (JWT)',
        method: 'GET',
        url: '/api/download',
        request: (id) => send('GET', `/api/download?session=${id}&file=session_results.json`, jwt),
      },
      {
        name: 'GET /api/download?session= (key)',
        method: 'GET',
        url: '/api/download',
        request: (id) => send('GET', `/api/download?session=${id}&file=pipeline.log`, { 'x-api-key': LEGACY_KEY }),
      },
      {
        name: 'PUT /api/refresh?session=',
        method: 'PUT',
        url: '/api/refresh',
        request: (id) =>
          rawRequest(`${portal.url}/api/refresh?session=${id}&file=report.html`, {
            method: 'PUT',
            headers: { 'x-api-key': LEGACY_KEY, 'content-type': 'text/html' },
            body: Buffer.from('<html><body>evil</body></html>'),
          }),
      },
      {
        name: 'GET /api/benchmark?session=',
        method: 'GET',
        url: '/api/benchmark',
        request: (id) => send('GET', `/api/benchmark?session=${id}`, jwt),
      },
      {
        name: 'PATCH /api/remediation-update {session_id}',
        method: 'PATCH',
        url: '/api/remediation-update',
        // A JSON body: the raw value is decoded the way the query string would be, then sent as is.
        request: (id) =>
          send(
            'PATCH',
            '/api/remediation-update',
            jwt,
            JSON.stringify({ session_id: safeDecode(id), items: [{ title: 'SMBv1 enabled', status: 'resolved' }] }),
          ),
      },
    ];
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  const exists = (e: Endpoint) => portal.app.hasRoute({ method: e.method as 'GET', url: e.url });

  it('the endpoints under test are there (those another change has not added yet are skipped)', () => {
    const present = endpoints.filter(exists).map((e) => e.name);
    expect(present).toEqual(
      expect.arrayContaining([
        'GET /api/sessions?session=',
        'PATCH /api/sessions?session=',
        'DELETE /api/sessions?session=',
      ]),
    );
  });

  it('the valid id "x" works on every endpoint (so a 400 below is the id check, not the credential)', async () => {
    for (const e of endpoints.filter(exists)) {
      if (e.method === 'DELETE') continue; // keep the canary
      const res = await e.request('x');
      expect([200, 404, 409], `${e.name}: ${res.status} ${res.text}`).toContain(res.status);
      if (e.method === 'GET' && e.url !== '/api/benchmark') expect(res.status, e.name).toBe(200);
    }
  });

  describe.each(BAD_IDS)('%s', (_label, raw) => {
    it('is refused with 400 by every session endpoint, before storage is touched', async () => {
      const objectsBefore = await blobObjects(portal.dataDir);
      for (const e of endpoints.filter(exists)) {
        blobCalls.length = 0;
        const res = await e.request(raw);
        expect(res.status, `${e.name}: ${res.text}`).toBe(400);
        expect(typeof res.body.error, e.name).toBe('string');
        expect(blobCalls, e.name).toStrictEqual([]);
      }
      expect(await blobObjects(portal.dataDir)).toStrictEqual(objectsBefore);
      expect(await blobTmp(portal.dataDir)).toStrictEqual([]);
      for (const f of sentinels) expect(await fs.readFile(f, 'utf8')).toBe('sentinel');
    });
  });

  it('the canary session is intact afterwards', async () => {
    const res = await rawRequest(`${portal.url}/api/sessions?session=x`, {
      method: 'GET',
      headers: { 'x-identity-token': admin },
    });
    expect(res.status).toBe(200);
    // Only the valid PATCH above changed it (to archived, with its one note).
    const patched = portal.app.hasRoute({ method: 'PATCH', url: '/api/sessions' });
    expect(res.body.session.status).toBe(patched ? 'archived' : 'new');
    expect(res.body.notes.map((n: { note: string }) => n.note)).toStrictEqual(patched ? ['n'] : []);
    expect(res.body.session.files.map((f: { name: string }) => f.name).sort()).toStrictEqual([
      'pipeline.log',
      'report.html',
      'session_results.json',
    ]);
  });
});

function safeDecode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
