import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { http } from '@svc/test-support/http';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';

/**
 * How the portal serves the web console: `/` leads to /console/, every console
 * address and /collect/ answer the built index.html (no-cache, CSP of self only, never
 * framed), hashed assets are immutable, and a missing build is a 503 page saying how to build.
 * The build here is a stand-in directory (SVC_WEB_DIR), so the test does not need Vite.
 */

const INDEX =
  '<!doctype html><html lang="en"><head><title>console</title></head><body><div id="app"></div></body></html>';
const SCRIPT = 'console.log("console");\n';
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
/** The session view's frame: scripts only (no pop-ups, forms or top navigation), nothing from elsewhere, the console only. */
const FRAME_CSP =
  "sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; font-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'";

async function get(portal: TestPortal, target: string) {
  const res = await fetch(`${portal.url}${target}`, { redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('web console serving', () => {
  let portal: TestPortal;
  let webDir: string;

  beforeAll(async () => {
    webDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-web-dist-'));
    portal = await startTestPortal({ env: { SVC_WEB_DIR: webDir } });
  });

  afterAll(async () => {
    await portal?.close();
    await fs.rm(webDir, { recursive: true, force: true });
  });

  it('reads the build from packages/web/dist wherever the portal starts, or from SVC_WEB_DIR', () => {
    const dist = path.resolve(import.meta.dirname, '../../web/dist');
    expect(loadConfig({}, os.tmpdir()).webDir).toBe(dist);
    expect(loadConfig({ SVC_WEB_DIR: 'built' }, '/srv/portal').webDir).toBe('/srv/portal/built');
  });

  it('answers a 503 page that says how to build while the console is not built', async () => {
    const res = await get(portal, '/console/');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    expect(res.text).toContain('<h1>The web console is not built</h1>');
    expect(res.text).toContain('<code>npm run build:web</code>');
    expect((await get(portal, '/collect/?session=s1')).status).toBe(503);
  });

  describe('once built', () => {
    beforeAll(async () => {
      await fs.mkdir(path.join(webDir, 'assets'));
      await fs.writeFile(path.join(webDir, 'index.html'), INDEX);
      await fs.writeFile(path.join(webDir, 'assets', 'index-AbC123.js'), SCRIPT);
      await fs.writeFile(path.join(webDir, 'assets', 'index-AbC123.js.map'), '{}');
      await fs.writeFile(path.join(webDir, '.secret.js'), 'no');
    });

    it('sends / to the console', async () => {
      const res = await get(portal, '/');
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('/console/');
    });

    it('adds the trailing slash to /console and /collect, keeping the query', async () => {
      const a = await get(portal, '/console');
      expect(a.status).toBe(301);
      expect(a.headers.get('location')).toBe('/console/');
      const b = await get(portal, '/collect?session=abc-1&client_id=acme');
      expect(b.status).toBe(301);
      expect(b.headers.get('location')).toBe('/collect/?session=abc-1&client_id=acme');
    });

    it.each(['/console/', '/console/sessions', '/console/fleet/agents/a1', '/collect/?session=abc-1'])(
      'answers %s with the index page, not cached, self-only CSP, never framed',
      async (target) => {
        const res = await get(portal, target);
        expect(res.status).toBe(200);
        expect(res.text).toBe(INDEX);
        expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(res.headers.get('cache-control')).toBe('no-cache');
        expect(res.headers.get('content-security-policy')).toBe(CSP);
        expect(res.headers.get('x-frame-options')).toBe('DENY');
        expect(res.headers.get('x-content-type-options')).toBe('nosniff');
        expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      },
    );

    it('serves hashed assets as immutable with their type', async () => {
      const res = await get(portal, '/console/assets/index-AbC123.js');
      expect(res.status).toBe(200);
      expect(res.text).toBe(SCRIPT);
      expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(SCRIPT)));
    });

    it.each([
      '/console/assets/missing-1.js',
      '/console/assets/index-AbC123.js.map',
      '/console/assets/..%2Findex.html',
      '/console/assets/..%2F.secret.js',
      '/console/assets/.hidden.js',
    ])('answers %s with the JSON 404', async (target) => {
      const res = await http(portal.url, 'GET', target);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: `Not found: GET ${target}` });
    });

    it('keeps the console out of the API document', async () => {
      const doc = (await http(portal.url, 'GET', '/api/openapi.json')).body as { paths: Record<string, unknown> };
      const paths = Object.keys(doc.paths);
      expect(paths.filter((p) => p === '/' || p.startsWith('/console') || p.startsWith('/collect'))).toEqual([]);
    });
  });

  describe('the report frame of the session view', () => {
    const REPORT = '<!doctype html><html><body><h1>Report</h1><script>document.title = "r";</script></body></html>';
    let token = '';

    beforeAll(async () => {
      const res = await postUpload(
        portal.url,
        LEGACY_KEY,
        sessionParts({ metadata: { session_id: newSessionId(), client: 'Acme', target: 'net' } }, { report: REPORT }),
      );
      if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
      token = String(res.body.share_token);
    });

    it('serves the report sandboxed (opaque origin) and frameable by the console only', async () => {
      const res = await get(portal, `/collect/frame?token=${token}&file=report.html`);
      expect(res.status).toBe(200);
      expect(res.text).toBe(REPORT);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(FRAME_CSP);
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    });

    it.each([
      ['no token', '/collect/frame?file=report.html', 400],
      ['a malformed token', '/collect/frame?token=abc&file=report.html', 400],
      ['a file it does not frame', '/collect/frame?token=TOKEN&file=session_results.json', 400],
      ['an unknown token', `/collect/frame?token=${'0'.repeat(64)}&file=report.html`, 404],
      ['a file the session lacks', '/collect/frame?token=TOKEN&file=exec_summary.html', 404],
    ])('answers %s with a sandboxed page and %i', async (_case, target, status) => {
      const res = await get(portal, target.replace('TOKEN', token));
      expect(res.status).toBe(status);
      expect(res.headers.get('content-security-policy')).toBe(FRAME_CSP);
      expect(res.text).not.toContain(REPORT);
    });
  });
});
