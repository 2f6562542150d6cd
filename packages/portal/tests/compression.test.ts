import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, type LicenseFixture } from '@svc/test-support/factories';
import { withKey, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * Compression of what the portal serves (src/http/compression.ts), over real HTTP: each
 * content type the portal answers with, in brotli, in gzip and as identity, the encoded
 * bytes decoded here and compared with the identity answer byte for byte; headers of
 * uploaded content (sandbox CSP, nosniff, no-store) stay as they are.
 * node:http, not fetch: fetch asks for compression itself and hides the encoded bytes.
 */

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes on the wire. */
  wire: Buffer;
  /** The bytes after undoing Content-Encoding. */
  body: Buffer;
}

function decode(wire: Buffer, encoding: string | undefined): Buffer {
  if (encoding === undefined) return wire;
  if (encoding === 'br') return zlib.brotliDecompressSync(wire);
  if (encoding === 'gzip') return zlib.gunzipSync(wire);
  throw new Error(`unexpected content-encoding ${encoding}`);
}

/** GET with exactly the headers given (no Accept-Encoding unless given). */
function get(portal: TestPortal, target: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${portal.url}${target}`, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const wire = Buffer.concat(chunks);
        const encoding = res.headers['content-encoding'];
        resolve({ status: res.statusCode ?? 0, headers: res.headers, wire, body: decode(wire, encoding) });
      });
    });
    req.on('error', reject);
  });
}

const BR = { 'accept-encoding': 'gzip, deflate, br' };
const GZIP = { 'accept-encoding': 'gzip' };

/** Headers that must be the same whatever the encoding. */
const KEPT = [
  'content-type',
  'content-security-policy',
  'x-content-type-options',
  'cache-control',
  'x-frame-options',
  'referrer-policy',
  'content-disposition',
  'x-robots-tag',
] as const;

/**
 * The answer in brotli, in gzip and without Accept-Encoding: the first two compressed (and
 * smaller), the last identity, all three the same bytes and the same headers once decoded.
 */
async function expectCompressed(portal: TestPortal, target: string, headers: Record<string, string> = {}) {
  const plain = await get(portal, target, headers);
  const br = await get(portal, target, { ...headers, ...BR });
  const gz = await get(portal, target, { ...headers, ...GZIP });
  expect(plain.status).toBe(200);
  expect(plain.headers['content-encoding']).toBeUndefined();
  expect(br.headers['content-encoding']).toBe('br');
  expect(gz.headers['content-encoding']).toBe('gzip');
  for (const res of [br, gz]) {
    expect(res.status).toBe(200);
    expect(res.headers.vary).toMatch(/accept-encoding/i);
    expect(res.body.equals(plain.body)).toBe(true);
    expect(res.wire.length).toBeLessThan(plain.wire.length);
    for (const h of KEPT) expect(res.headers[h], h).toEqual(plain.headers[h]);
  }
  return { plain, br, gz };
}

const INDEX = `<!doctype html><html lang="en"><head><title>console</title><script type="module" src="/console/assets/index-AbC123.js"></script></head><body>${'<div class="shell"></div>\n'.repeat(80)}</body></html>`;
const SCRIPT = `export function view(rows) {\n${'  rows.forEach((row) => console.log(row.id, row.name));\n'.repeat(60)}}\n`;
const STYLE = `${'.table td { padding: 0.25rem 0.5rem; color: var(--text); }\n'.repeat(60)}`;
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">${'<rect x="1" y="1" width="2" height="2"/>'.repeat(60)}</svg>`;
/** Random bytes under a PNG signature: nothing to gain, so never compressed. */
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), zlib.gzipSync(SCRIPT)]);
const REPORT = `<!doctype html><html><body><div id="consultation-section" class="consultation-section"><button id="scheduleBtn">Book</button></div>${'<p>Finding: TLS 1.0 enabled on 10.0.0.5:443</p>\n'.repeat(60)}</body></html>`;

describe('compression', () => {
  let portal: TestPortal;
  let webDir: string;
  let key: LicenseFixture;
  let admin: string;
  const sessionId = newSessionId();
  const smallId = newSessionId();
  let shareToken: string;

  beforeAll(async () => {
    webDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-web-dist-'));
    await fs.mkdir(path.join(webDir, 'assets'));
    await fs.writeFile(path.join(webDir, 'index.html'), INDEX);
    await fs.writeFile(path.join(webDir, 'assets', 'index-AbC123.js'), SCRIPT);
    await fs.writeFile(path.join(webDir, 'assets', 'index-AbC123.css'), STYLE);
    await fs.writeFile(path.join(webDir, 'assets', 'logo-AbC123.svg'), SVG);
    await fs.writeFile(path.join(webDir, 'assets', 'shot-AbC123.png'), PNG);
    portal = await startTestPortal({ env: { SVC_WEB_DIR: webDir } });
    key = await createLicense(portal, { tier: 'business' });
    admin = await portal.adminToken();
    const up = await postUpload(
      portal.url,
      key.key,
      sessionParts(sessionDoc('session-complete.json', sessionId), {
        report: REPORT,
        exec: REPORT,
        log: 'stage ok\n'.repeat(300),
      }),
    );
    if (up.status !== 200) throw new Error(`upload: ${up.status} ${up.text}`);
    shareToken = up.body.share_token;
    const small = await postUpload(
      portal.url,
      key.key,
      sessionParts(sessionDoc('session-minimal.json', smallId), { log: 'stage ok\n' }),
    );
    if (small.status !== 200) throw new Error(`upload: ${small.status} ${small.text}`);
  });

  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
    await fs.rm(webDir, { recursive: true, force: true });
  });

  it('JSON answers of the API: brotli or gzip as asked, identity without Accept-Encoding', async () => {
    const { plain } = await expectCompressed(portal, `/api/sessions?session=${sessionId}`, withToken(admin));
    expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(plain.body.toString('utf8')).session.session_id).toBe(sessionId);
  });

  it('the OpenAPI document', async () => {
    const { br } = await expectCompressed(portal, '/api/openapi.json');
    expect(JSON.parse(br.body.toString('utf8')).openapi).toBe('3.1.0');
    // The document is large and repetitive: brotli takes it well below a fifth.
    expect(br.wire.length * 5).toBeLessThan(br.body.length);
  });

  it("the console's HTML, JS, CSS and SVG, keeping the console's CSP and caching", async () => {
    const page = await expectCompressed(portal, '/console/');
    expect(page.plain.body.toString('utf8')).toBe(INDEX);
    expect(page.br.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.br.headers['cache-control']).toBe('no-cache');
    const js = await expectCompressed(portal, '/console/assets/index-AbC123.js');
    expect(js.gz.body.toString('utf8')).toBe(SCRIPT);
    expect(js.br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    // A compressed stream has no length known in advance; the identity answer keeps it.
    expect(js.br.headers['content-length']).toBeUndefined();
    expect(js.plain.headers['content-length']).toBe(String(Buffer.byteLength(SCRIPT)));
    expect((await expectCompressed(portal, '/console/assets/index-AbC123.css')).br.body.toString('utf8')).toBe(STYLE);
    expect((await expectCompressed(portal, '/console/assets/logo-AbC123.svg')).br.body.toString('utf8')).toBe(SVG);
    expect((await expectCompressed(portal, '/collect/?session=x')).plain.body.toString('utf8')).toBe(INDEX);
  });

  it('a PNG is sent as it is, whatever the client accepts', async () => {
    const res = await get(portal, '/console/assets/shot-AbC123.png', BR);
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-length']).toBe(String(PNG.length));
    expect(res.wire.equals(PNG)).toBe(true);
  });

  it('stored session files: the JSON and the log as attachments, compressed as they stream', async () => {
    const json = await expectCompressed(portal, `/api/download?session=${sessionId}`, withKey(key.key));
    expect(json.br.headers['content-disposition']).toBe(`attachment; filename="${sessionId}_session_results.json"`);
    expect(JSON.parse(json.br.body.toString('utf8')).metadata.session_id).toBe(sessionId);
    const log = await expectCompressed(
      portal,
      `/api/download?session=${sessionId}&file=pipeline.log`,
      withKey(key.key),
    );
    expect(log.gz.body.toString('utf8')).toBe('stage ok\n'.repeat(300));
  });

  it('a stored file under 1 KB is sent as it is, with its length', async () => {
    const res = await get(portal, `/api/download?session=${smallId}&file=pipeline.log`, { ...withKey(key.key), ...BR });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-length']).toBe('9');
    expect(res.wire.toString('utf8')).toBe('stage ok\n');
  });

  it('an uploaded report viewed inline keeps its sandbox CSP and headers when compressed', async () => {
    const view = await expectCompressed(
      portal,
      `/api/download?session=${sessionId}&file=report.html&mode=view`,
      withKey(key.key),
    );
    expect(view.br.body.toString('utf8')).toBe(REPORT);
    expect(view.br.headers['content-security-policy']).toBe(
      "sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; font-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(view.br.headers['x-content-type-options']).toBe('nosniff');
    expect(view.br.headers['cache-control']).toBe('private, no-store');
    expect(view.br.headers['content-disposition']).toBe('inline');
  });

  it("the share page's and the console's report frames keep their sandbox CSP when compressed", async () => {
    const shared = await expectCompressed(portal, `/share/frame?token=${shareToken}&file=report.html`);
    expect(shared.br.headers['content-security-policy']).toBe(
      "sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; font-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'",
    );
    // The bridge went in before the last closing body tag.
    expect(shared.br.body.toString('utf8')).toMatch(/<script[^>]*>[\s\S]*<\/script>\s*<\/body><\/html>$/);
    const exec = await expectCompressed(portal, `/share/frame?token=${shareToken}&file=exec_summary.html`);
    expect(exec.gz.body.toString('utf8')).toBe(REPORT);
    const framed = await expectCompressed(portal, `/collect/frame?token=${shareToken}&file=report.html`);
    expect(framed.br.body.toString('utf8')).toBe(REPORT);
    expect(framed.br.headers['content-security-policy']).toBe(
      "sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; font-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'",
    );
  });

  it('follows the client: identity when asked for, gzip when brotli is refused, none under 1 KB', async () => {
    const target = '/api/openapi.json';
    expect((await get(portal, target, { 'accept-encoding': 'identity' })).headers['content-encoding']).toBeUndefined();
    expect((await get(portal, target, { 'accept-encoding': 'br;q=0, gzip' })).headers['content-encoding']).toBe('gzip');
    expect((await get(portal, target, { 'accept-encoding': 'gzip;q=0.5, br' })).headers['content-encoding']).toBe('br');
    expect((await get(portal, target, { 'accept-encoding': 'deflate' })).headers['content-encoding']).toBeUndefined();
    const small = await get(portal, '/api/health', BR);
    expect(small.status).toBe(200);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.wire.length).toBeLessThan(1024);
  });

  it('does not inflate a compressed request body: it reaches the parser as sent and is refused', async () => {
    const body = zlib.gzipSync(JSON.stringify({ status: 'in_review' }));
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        `${portal.url}/api/sessions?session=${sessionId}`,
        {
          method: 'PATCH',
          agent: false,
          headers: {
            'content-type': 'application/json',
            'content-encoding': 'gzip',
            'content-length': body.length,
            ...withToken(admin),
          },
        },
        (r) => {
          let text = '';
          r.on('data', (c: Buffer) => (text += c.toString('utf8')));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toHaveProperty('error');
    const after = await get(portal, `/api/sessions?session=${sessionId}`, withToken(admin));
    expect(JSON.parse(after.body.toString('utf8')).session.status).toBe('new');
  });
});
