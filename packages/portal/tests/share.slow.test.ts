import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeScript, insertBridge } from '../src/web/bridge.ts';
import { createLicense, FakeClock, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts, type SessionFiles } from '@svc/test-support/upload';

/** GET /api/share and the share page /share/ (docs/api.md#sessions). */

/** The report in the share page's frame: no external loads, no pop-ups, no forms, framed by the portal only. */
const FRAME_CSP =
  "sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; font-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'";
/** The portal's own share pages: only their own inline style (and script), by hash. */
const PAGE_CSP =
  /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]{43}='; script-src ('sha256-[A-Za-z0-9+/]{43}='|'none'); frame-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'$/;

/** The scanner's report shape: consultation block, and a script string holding a closing body tag. */
const REPORT = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Security report</title></head>
<body>
<h1>Findings</h1>
<section id="consultation-section" class="consultation-section">
  <p>Talk to us: <a href="mailto:consult@example.com">consult@example.com</a></p>
  <button id="scheduleBtn" type="button">Schedule a consultation</button>
</section>
<script>
  function printView() { return "<html><body>" + document.querySelector("h1").outerHTML + "</body></html>"; }
</script>
</BODY>
</html>
`;
const EXEC = '<!doctype html><html><body><h1>Executive summary</h1></body></html>';

function sessionJson(sessionId: string, opts: { client: string; target: string; risk?: number; grade?: string }) {
  return {
    metadata: { session_id: sessionId, client: opts.client, target: opts.target },
    summary: {
      risk_score: opts.risk ?? 57.5,
      risk_grade: opts.grade ?? 'C',
      total_findings: 12,
      total_hosts: 4,
      severity_counts: { critical: 1, high: 2, medium: 3, low: 4, info: 2 },
    },
  };
}

describe('share', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let key: LicenseFixture;
  const withReport = newSessionId();
  const noReport = newSessionId();
  const noBodyTag = newSessionId();
  const execOnly = newSessionId();
  const tokens: Record<string, string> = {};
  const uploadedAt: Record<string, string> = {};

  async function upload(sessionId: string, doc: object, files: SessionFiles = {}) {
    clock.advance(60_000);
    uploadedAt[sessionId] = clock.now().toISOString();
    const res = await postUpload(portal.url, key.key, sessionParts(doc, files));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    tokens[sessionId] = res.body.share_token;
  }

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    key = await createLicense(portal, { tier: 'business' });
    await upload(withReport, sessionJson(withReport, { client: 'Acme Corp', target: '10.0.0.0/24' }), {
      report: REPORT,
      exec: EXEC,
      log: 'log\n',
    });
    await upload(noReport, sessionJson(noReport, { client: 'Bob <b>&</b> Sons', target: 'example.org' }));
    await upload(execOnly, sessionJson(execOnly, { client: 'Exec Only', target: 'host' }), { exec: EXEC });
    await upload(noBodyTag, sessionJson(noBodyTag, { client: 'Nobody', target: 'host' }), {
      report: '<h1>fragment report</h1><button id="scheduleBtn">x</button>',
    });
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  describe('GET /api/share', () => {
    it("answers the session's summary, and nothing that is not the token holder's business", async () => {
      const res = await http(portal.url, 'GET', `/api/share?token=${tokens[withReport]}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-robots-tag')).toBe('noindex');
      expect(res.body).toEqual({
        session_id: withReport,
        client: 'Acme Corp',
        target: '10.0.0.0/24',
        risk_score: 57.5,
        risk_grade: 'C',
        total_findings: 12,
        total_hosts: 4,
        severity_summary: { critical: 1, high: 2, medium: 3, low: 4, info: 2 },
        uploaded_at: uploadedAt[withReport],
        expires_at: new Date(Date.parse(uploadedAt[withReport]!) + 90 * 86_400_000).toISOString(),
        has_exec_summary: true,
        files: ['session_results.json', 'pipeline.log', 'report.html', 'exec_summary.html'],
        // A file without findings states its own scores; the triage of the day adds nothing.
        risk_score_operational: null,
        risk_grade_operational: null,
        triage_as_of: clock.now().toISOString(),
        triage_changed_since_report: null,
      });
      expect(res.text).not.toContain(key.record.client_id);
    });

    it('a session without extra files', async () => {
      const res = await http(portal.url, 'GET', `/api/share?token=${tokens[noReport]}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        session_id: noReport,
        client: 'Bob <b>&</b> Sons',
        has_exec_summary: false,
        files: ['session_results.json'],
      });
    });

    it('the token is read case-insensitively', async () => {
      const res = await http(portal.url, 'GET', `/api/share?token=${tokens[noReport]!.toUpperCase()}`);
      expect(res.status).toBe(200);
      expect(res.body.session_id).toBe(noReport);
    });

    it('missing or malformed token: 400; unknown token: 404', async () => {
      const cases: [string, number, string][] = [
        ['', 400, 'Missing token parameter'],
        ['?token=', 400, 'Missing token parameter'],
        ['?token=abc', 400, 'Invalid token parameter: must be 64 hex characters'],
        [`?token=${'g'.repeat(64)}`, 400, 'Invalid token parameter: must be 64 hex characters'],
        [`?token=${tokens[withReport]}0`, 400, 'Invalid token parameter: must be 64 hex characters'],
        [`?token=${'0'.repeat(64)}`, 404, 'Share link not found'],
      ];
      for (const [query, status, error] of cases) {
        const res = await http(portal.url, 'GET', `/api/share${query}`);
        expect(res.status, query).toBe(status);
        expect(res.body, query).toEqual({ error });
        expect(res.headers.get('x-robots-tag'), query).toBe('noindex');
        expect(res.headers.get('cache-control'), query).toBe('no-store');
      }
    });
  });

  describe('the share page /share/', () => {
    const page = (query: string) => http(portal.url, 'GET', `/share/${query}`);

    // Uncompressed, so that the exact length the portal computes for the framed report shows.
    const frame = (query: string) =>
      http(portal.url, 'GET', `/share/frame${query}`, { headers: { 'accept-encoding': 'identity' } });

    function expectCommonHeaders(res: { headers: Headers }) {
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-dns-prefetch-control')).toBe('off');
      expect(res.headers.get('x-robots-tag')).toBe('noindex');
    }

    function expectPageHeaders(res: { headers: Headers }) {
      expectCommonHeaders(res);
      expect(res.headers.get('content-security-policy')).toMatch(PAGE_CSP);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }

    function expectFrameHeaders(res: { headers: Headers }) {
      expectCommonHeaders(res);
      expect(res.headers.get('content-security-policy')).toBe(FRAME_CSP);
      expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    }

    it('is a page of the portal: the label bar, and the report in a sandboxed frame', async () => {
      const res = await page(`?token=${tokens[withReport]}`);
      expect(res.status).toBe(200);
      expectPageHeaders(res);
      const t = tokens[withReport]!;
      expect(res.text).toContain(
        '<strong>Scanner report uploaded by Acme Corp</strong> — the content below is not part of the portal; the portal never asks for your password here.',
      );
      expect(res.text).toContain(`<p class="meta">10.0.0.0/24 · uploaded ${uploadedAt[withReport]!.slice(0, 10)}</p>`);
      expect(res.text).toContain(
        `<iframe id="svc-report" title="Report" src="frame?token=${t}&amp;file=report.html" sandbox="allow-scripts" referrerpolicy="no-referrer"></iframe>`,
      );
      // What the consultation button opens: a fixed page of the portal, never an address from the report.
      expect(res.text).toContain(`data-consultation="consultation?token=${t}"`);
      expect(res.text).toContain(`data-src="frame?token=${t}&amp;file=exec_summary.html"`);
      expect(res.text).not.toContain(key.record.client_id);
      // Nothing of the report itself is in the page.
      expect(res.text).not.toContain('consultation-section');
      expect(res.text).not.toContain('data-svc-share-bridge');
      // One inline style and one inline script, exactly the ones the CSP names.
      expect(res.text.split('<script')).toHaveLength(2);
      expect(res.text.split('<style')).toHaveLength(2);
      const csp = res.headers.get('content-security-policy')!;
      const { createHash } = await import('node:crypto');
      const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
      const inline = (tag: string) => new RegExp(`<${tag}>([^]*?)</${tag}>`).exec(res.text)![1]!;
      expect(csp).toContain(`style-src ${hash(inline('style'))};`);
      expect(csp).toContain(`script-src ${hash(inline('script'))};`);
    });

    it('frames the report with the bridge at the LAST closing body tag (the report has one in a script string)', async () => {
      const res = await frame(`?token=${tokens[withReport]}&file=report.html`);
      expect(res.status).toBe(200);
      expectFrameHeaders(res);
      const bridge = bridgeScript({ sessionId: withReport, baseUrl: 'http://portal.test' });
      expect(res.text).toBe(insertBridge(REPORT, bridge));
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.text)));
      // Spelled out: the bridge sits right before `</BODY>`, after the report's own script ...
      const at = res.text.indexOf('<script data-svc-share-bridge="1">');
      expect(at).toBeGreaterThan(res.text.indexOf('</body></html>"; }'));
      expect(res.text.slice(at + bridge.length)).toBe('</BODY>\n</html>\n');
      // ... the script string is intact, and so is the consultation block.
      expect(res.text).toContain(
        'return "<html><body>" + document.querySelector("h1").outerHTML + "</body></html>"; }',
      );
      expect(res.text).toContain('<section id="consultation-section" class="consultation-section">');
      expect(res.text).toContain('<button id="scheduleBtn" type="button">Schedule a consultation</button>');
      expect(res.text.split('data-svc-share-bridge')).toHaveLength(2);
    });

    it('streams a report larger than the 64 KiB tail: the bridge at the last tag, or appended when the tail has none', async () => {
      const rows = '<tr><td>192.168.1.10</td><td>ssh</td></tr>\n'.repeat(10_000);
      const big = `<!DOCTYPE html><html><body><script>var t = "</body>";</script>${rows}</body>\n</html>\n`;
      const trailing = `<!DOCTYPE html><html><body>${rows}</body>\n<!-- ${'x'.repeat(70 * 1024)} -->\n`;
      const bigId = newSessionId();
      const trailingId = newSessionId();
      await upload(bigId, sessionJson(bigId, { client: 'Big', target: 'net' }), { report: big });
      await upload(trailingId, sessionJson(trailingId, { client: 'Trailing', target: 'net' }), { report: trailing });
      const bridgeFor = (id: string) => bridgeScript({ sessionId: id, baseUrl: 'http://portal.test' });

      const res = await frame(`?token=${tokens[bigId]}`);
      expect(res.status).toBe(200);
      expectFrameHeaders(res);
      expect(res.text).toBe(insertBridge(big, bridgeFor(bigId)));
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.text)));

      // More than 64 KiB after the last closing body tag: the bridge goes at the very end.
      const late = await frame(`?token=${tokens[trailingId]}`);
      expect(late.status).toBe(200);
      expect(late.text).toBe(trailing + bridgeFor(trailingId));
      expect(late.headers.get('content-length')).toBe(String(Buffer.byteLength(late.text)));
    });

    it('appends the bridge to a report without a closing body tag', async () => {
      const res = await frame(`?token=${tokens[noBodyTag]}`);
      expect(res.status).toBe(200);
      expectFrameHeaders(res);
      expect(
        res.text.startsWith(
          '<h1>fragment report</h1><button id="scheduleBtn">x</button><script data-svc-share-bridge="1">',
        ),
      ).toBe(true);
      expect(res.text.trimEnd().endsWith('</script>')).toBe(true);
    });

    it('a session with only an executive summary: the page frames that', async () => {
      const res = await page(`?token=${tokens[execOnly]}`);
      expect(res.status).toBe(200);
      expectPageHeaders(res);
      expect(res.text).toContain(
        `<iframe id="svc-report" title="Executive summary" src="frame?token=${tokens[execOnly]}&amp;file=exec_summary.html" sandbox="allow-scripts"`,
      );
      expect(res.text).not.toContain('data-src=');
      expect(res.text).not.toContain(' data-consultation="');
    });

    it('a session without HTML files: a summary page, escaped, linking the files through the token', async () => {
      const res = await page(`?token=${tokens[noReport]}`);
      expect(res.status).toBe(200);
      expectPageHeaders(res);
      expect(res.text).toContain('<h1>Shared scan report</h1>');
      expect(res.text).toContain('<tr><th>Client</th><td>Bob &lt;b&gt;&amp;&lt;/b&gt; Sons</td></tr>');
      expect(res.text).toContain('<tr><th>Risk score</th><td>57.5</td></tr>');
      expect(res.text).toContain(
        `<a href="../api/download?session=${noReport}&amp;file=session_results.json&amp;mode=view&amp;token=${tokens[noReport]}" target="_blank" rel="noopener noreferrer">session_results.json</a>`,
      );
      expect(res.text).not.toContain('<b>&</b>');
      expect(res.text).not.toContain('<script');
    });

    it('unknown token: 404 page; malformed or missing: 400 page; same headers', async () => {
      const unknown = await page(`?token=${'0'.repeat(64)}`);
      expect(unknown.status).toBe(404);
      expectPageHeaders(unknown);
      expect(unknown.text).toContain('<h1>Share link not found</h1>');
      for (const q of ['', '?token=nothex', `?token=${'a'.repeat(63)}`]) {
        const res = await page(q);
        expect(res.status, q).toBe(400);
        expectPageHeaders(res);
        expect(res.text).toContain('<h1>Invalid share link</h1>');
      }
    });

    it('frames the executive summary as stored; refuses other files and bad tokens', async () => {
      const exec = await frame(`?token=${tokens[withReport]}&file=exec_summary.html`);
      expect(exec.status).toBe(200);
      expectFrameHeaders(exec);
      expect(exec.text).toBe(EXEC);
      const notFound = await frame(`?token=${tokens[noReport]}&file=report.html`);
      expect(notFound.status).toBe(404);
      expectFrameHeaders(notFound);
      for (const q of [
        `?token=${tokens[withReport]}&file=session_results.json`,
        '?file=report.html',
        '?token=nothex',
      ]) {
        const res = await frame(q);
        expect(res.status, q).toBe(400);
        expectFrameHeaders(res);
      }
      expect((await frame(`?token=${'0'.repeat(64)}`)).status).toBe(404);
    });

    it("/share/consultation: the contact the stored report names, as a link of the portal's page", async () => {
      const consultation = (query: string) => http(portal.url, 'GET', `/share/consultation${query}`);
      const res = await consultation(`?token=${tokens[withReport]}`);
      expect(res.status).toBe(200);
      expectPageHeaders(res);
      expect(res.text).toContain(
        '<p><a id="svc-consultation" href="mailto:consult@example.com" rel="noopener noreferrer">mailto:consult@example.com</a></p>',
      );
      expect(res.text).not.toContain('<script');
      // A report that names none, no report, an unknown token: 404; a malformed one: 400.
      for (const q of [`?token=${tokens[noBodyTag]}`, `?token=${tokens[execOnly]}`, `?token=${'0'.repeat(64)}`]) {
        const none = await consultation(q);
        expect(none.status, q).toBe(404);
        expectPageHeaders(none);
        expect(none.text, q).toContain('<h1>No consultation contact</h1><p>This report names no contact.</p>');
      }
      for (const q of ['', '?token=nothex']) {
        const bad = await consultation(q);
        expect(bad.status, q).toBe(400);
        expectPageHeaders(bad);
        expect(bad.text, q).toContain('<h1>Invalid share link</h1>');
      }
    });

    it('/share redirects to /share/ with the query', async () => {
      const res = await fetch(`${portal.url}/share?token=${tokens[withReport]}`, { redirect: 'manual' });
      expect(res.status).toBe(301);
      expect(res.headers.get('location')).toBe(`share/?token=${tokens[withReport]}`);
    });

    it('the share URL of the upload answer is this page', async () => {
      const sessionId = newSessionId();
      const res = await postUpload(
        portal.url,
        key.key,
        sessionParts(sessionJson(sessionId, { client: 'X', target: 'y' })),
      );
      expect(res.body.share_url).toBe(`http://portal.test/share/?token=${res.body.share_token}`);
      const shown = await http(
        portal.url,
        'GET',
        new URL(res.body.share_url).pathname + new URL(res.body.share_url).search,
      );
      expect(shown.status).toBe(200);
    });

    it('a deleted session is gone from the share page and the share API', async () => {
      const sessionId = newSessionId();
      await upload(sessionId, sessionJson(sessionId, { client: 'Gone', target: 'z' }), { report: REPORT });
      expect((await page(`?token=${tokens[sessionId]}`)).status).toBe(200);
      const del = await http(portal.url, 'DELETE', `/api/sessions?session=${sessionId}`, { headers: withKey(key.key) });
      expect(del.status).toBe(200);
      expect((await page(`?token=${tokens[sessionId]}`)).status).toBe(404);
      expect((await http(portal.url, 'GET', `/api/share?token=${tokens[sessionId]}`)).status).toBe(404);
    });
  });
});
