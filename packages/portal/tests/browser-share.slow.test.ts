import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { assertChromiumInstalled, CHROMIUM, launchChromiumProfile } from '@svc/test-support/chromium';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';
import { SCREENSHOT_DIR, screenshotsWanted } from '@svc/test-support/screenshots';

/**
 * The share page and the inline view of an uploaded report in a real browser (docs/api.md,
 * share URL and bridge: docs/api.md#sessions): the share page is the portal's label bar above the report's
 * sandboxed frame; the report's scripts run, but in an opaque origin (no cookies, no
 * storage, no fetch), and the portal's bridge script wires #scheduleBtn without touching
 * the report's own markup.
 *
 * Chromium is Debian's package at /usr/bin/chromium (scripts/setup-system.sh installs it;
 * `npm test` runs that first). No browser is ever downloaded. A missing Chromium fails
 * this file: it is never skipped.
 */

/** The report's consultation contact, which the portal's consultation page links. `.localhost` is loopback in Chromium, and the test answers it itself (context.route): nothing leaves the machine. */
const CONSULT_URL = 'https://consult.localhost/book';
const PRINT_VIEW = '<html><body><h1>Findings</h1></body></html>';

/**
 * Probes its own environment and writes the results, as JSON, into <pre id="probe">
 * (data-done="1" once complete) and document.title. The fetch is expected to be refused
 * by the CSP (connect-src falls back to default-src 'none'); a securitypolicyviolation
 * event tells a CSP refusal from any other failure.
 */
const PROBE_SCRIPT = `<script>
(function () {
  var out = { ran: true, origin: String(self.origin), cookie: null, localStorage: null, fetch: null, violations: [], printView: null };
  document.addEventListener('securitypolicyviolation', function (e) {
    out.violations.push({ directive: e.effectiveDirective, blocked: String(e.blockedURI) });
  });
  function attempt(fn) {
    try { return { threw: false, value: String(fn()) }; }
    catch (e) { return { threw: true, name: String(e && e.name), message: String(e && e.message) }; }
  }
  out.cookie = attempt(function () { return document.cookie; });
  out.localStorage = attempt(function () { return window.localStorage.getItem('svc'); });
  out.printView = typeof printView === 'function' ? printView() : null;
  var done = false;
  function finish() {
    if (done) return;
    done = true;
    var pre = document.getElementById('probe');
    pre.textContent = JSON.stringify(out);
    pre.setAttribute('data-done', '1');
    document.title = 'probe origin=' + out.origin;
  }
  var timer = setTimeout(function () { out.fetch = { settled: false }; finish(); }, 5000);
  fetch('/api/sessions', { credentials: 'include' }).then(
    function (res) { out.fetch = { settled: true, ok: true, status: res.status }; },
    function (err) { out.fetch = { settled: true, ok: false, name: String(err && err.name), message: String(err && err.message) }; }
  ).then(function () {
    clearTimeout(timer);
    // The violation event is queued as a task: let it arrive before reporting.
    setTimeout(finish, 100);
  });
})();
</script>`;

/** The scanner's report shape: consultation block, a script string holding a closing body tag, and the probe. */
const REPORT = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Security report</title></head>
<body>
<h1>Findings</h1>
<section id="consultation-section" class="consultation-section">
  <p>Talk to us: <a href="${CONSULT_URL}">book a call</a> or <a href="mailto:consult@example.com">consult@example.com</a></p>
  <button id="scheduleBtn" type="button">Schedule a consultation</button>
</section>
<script>
  function printView() { return "<html><body>" + document.querySelector("h1").outerHTML + "</body></html>"; }
</script>
<pre id="probe" style="white-space:pre-wrap;word-break:break-all"></pre>
${PROBE_SCRIPT}
</body>
</html>
`;
const EXEC = `<!doctype html><html><head><meta charset="utf-8"><title>Executive summary</title></head><body><h1>Executive summary</h1>
<pre id="probe" style="white-space:pre-wrap;word-break:break-all"></pre>
${PROBE_SCRIPT}
</body></html>`;

interface Attempt {
  threw: boolean;
  value?: string;
  name?: string;
  message?: string;
}
interface Probe {
  ran: boolean;
  origin: string;
  cookie: Attempt;
  localStorage: Attempt;
  fetch: { settled: boolean; ok?: boolean; status?: number; name?: string; message?: string };
  violations: { directive: string; blocked: string }[];
  printView: string | null;
}

async function readProbe(page: Page | Frame): Promise<Probe> {
  const pre = page.locator('#probe[data-done="1"]');
  await pre.waitFor({ state: 'attached', timeout: 15_000 });
  return JSON.parse((await pre.textContent()) ?? '') as Probe;
}

/** What an opaque origin with the sandbox CSP looks like from inside. */
function expectOpaqueOrigin(probe: Probe): void {
  expect(probe.ran).toBe(true);
  expect(probe.origin).toBe('null');
  expect(probe.cookie).toMatchObject({ threw: true, name: 'SecurityError' });
  expect(probe.cookie.value).toBeUndefined();
  expect(probe.localStorage).toMatchObject({ threw: true, name: 'SecurityError' });
  expect(probe.fetch).toMatchObject({ settled: true, ok: false, name: 'TypeError' });
  expect(probe.violations).toContainEqual(expect.objectContaining({ directive: 'connect-src' }));
}

describe('share page in Chromium', () => {
  let portal: TestPortal | undefined;
  let context: BrowserContext | undefined;
  let userDataDir: string | undefined;
  let screenshotDir: string | undefined;
  const sessionId = newSessionId();
  let token = '';
  const pageErrors: string[] = [];
  const consultRequests: string[] = [];

  const shareUrl = () => `${portal!.url}/share/?token=${token}`;
  const viewUrl = (file: string) =>
    `${portal!.url}/api/download?${new URLSearchParams({ session: sessionId, file, mode: 'view', token })}`;

  async function newPage(): Promise<Page> {
    requireChromium();
    const page = await context!.newPage();
    page.on('pageerror', (err) => pageErrors.push(`${page.url()}: ${err.message}`));
    return page;
  }

  /**
   * Every test starts here. Without Chromium each one FAILS with this message (a throw in
   * beforeAll would only fail the file and count its tests as skipped).
   */
  function requireChromium(): void {
    assertChromiumInstalled();
    if (context === undefined) throw new Error('the browser did not start (see the beforeAll error)');
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) return; // each test fails with requireChromium's message
    // The bridge's links are absolute, built from the base URL: it must be where the portal
    // really listens. 'self' may frame the share page (the embedding test below).
    portal = await startTestPortal({ ownBaseUrl: true, env: { SVC_FRAME_ANCESTORS: "'self'" } });
    const res = await postUpload(
      portal.url,
      LEGACY_KEY,
      sessionParts(
        {
          metadata: { session_id: sessionId, client: 'Acme Corp', target: '10.0.0.0/24' },
          summary: {
            risk_score: 57.5,
            risk_grade: 'C',
            total_findings: 12,
            total_hosts: 4,
            severity_counts: { critical: 1, high: 2, medium: 3, low: 4, info: 2 },
          },
        },
        { report: REPORT, exec: EXEC },
      ),
    );
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    token = String(res.body.share_token);
    expect(token).toMatch(/^[0-9a-f]{64}$/);

    userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-chromium-profile-'));
    screenshotDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-screenshots-'));
    context = await launchChromiumProfile(userDataDir, { width: 1024, height: 768 });
    // A cookie the portal's pages could see if they were same-origin: the probe must not.
    const origin = new URL(portal.url);
    await context.addCookies([{ name: 'svc_probe', value: 'must-not-leak', domain: origin.hostname, path: '/' }]);
    // The consultation link's target, answered here: the popup needs a page, not the internet.
    await context.route(`${CONSULT_URL}*`, (route) => {
      consultRequests.push(route.request().url());
      return route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: '<!doctype html><title>Book a call</title><h1>Book a call</h1>',
      });
    });
  });

  afterAll(async () => {
    await context?.close();
    await portal?.close();
    for (const dir of [userDataDir, screenshotDir, portal?.dataDir])
      if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  /** The share page's report frame, once its document is there. */
  async function reportFrame(page: Page, file = 'report.html'): Promise<Frame> {
    const url = `${portal!.url}/share/frame?token=${token}&file=${file}`;
    await expect.poll(() => page.frames().some((f) => f.url() === url), { timeout: 15_000 }).toBe(true);
    return page.frames().find((f) => f.url() === url)!;
  }

  it('shows the report in an opaque origin, framed under the label, with the report markup intact', async () => {
    const page = await newPage();
    const framed = page.waitForResponse((r) => r.url().includes('/share/frame?'), { timeout: 15_000 });
    const response = await page.goto(shareUrl());
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toMatch(/^default-src 'none'; /);
    expect((await framed).headers()['content-security-policy']).toMatch(/^sandbox allow-scripts; /);

    const frame = await reportFrame(page);
    const probe = await readProbe(frame);
    expectOpaqueOrigin(probe);
    // The closing body tag inside the report's script string is not where the bridge went.
    expect(probe.printView).toBe(PRINT_VIEW);
    expect(await frame.title()).toBe('probe origin=null');
    expect(await page.title()).toBe(`Scan report ${sessionId}`);

    // The label is the page's, outside the report's document.
    const label = page.locator('#svc-share-label');
    await label.waitFor({ state: 'visible' });
    const labelText = (await label.textContent()) ?? '';
    expect(labelText).toContain(
      'Scanner report uploaded by Acme Corp — the content below is not part of the portal; the portal never asks for your password here.',
    );
    expect(labelText).toContain('10.0.0.0/24');
    expect(await label.getByRole('button', { name: 'Executive summary' }).count()).toBe(1);

    // The bridge ran in the report: one bridge script element, nothing added to the body.
    expect(await frame.locator('script[data-svc-share-bridge]').count()).toBe(1);
    expect(await frame.locator('#svc-share-banner').count()).toBe(0);
    expect(await frame.evaluate('document.body.firstElementChild.tagName')).toBe('H1');

    // The report's own markup as uploaded.
    const section = frame.locator('#consultation-section');
    expect(await section.getAttribute('class')).toBe('consultation-section');
    expect(await frame.locator('.consultation-section').count()).toBe(1);
    const btn = frame.locator('#consultation-section > #scheduleBtn');
    expect(await btn.count()).toBe(1);
    expect(await btn.textContent()).toBe('Schedule a consultation');
    expect(await btn.getAttribute('data-svc-bridge')).toBe('wired');

    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it("opens the portal's consultation page in a new window when #scheduleBtn is clicked, linking the report's contact", async () => {
    const page = await newPage();
    await page.goto(shareUrl());
    const frame = await reportFrame(page);
    await readProbe(frame);
    const [popup] = await Promise.all([
      context!.waitForEvent('page', { timeout: 15_000 }),
      frame.locator('#scheduleBtn').click(),
    ]);
    await popup.waitForLoadState('load');
    // The share page opens it (the report's frame may not open windows), at an address of its own.
    expect(popup.url()).toBe(`${portal!.url}/share/consultation?token=${token}`);
    const link = popup.locator('#svc-consultation');
    expect(await link.getAttribute('href')).toBe(CONSULT_URL);
    await Promise.all([popup.waitForURL(CONSULT_URL, { timeout: 15_000 }), link.click()]);
    expect(await popup.locator('h1').textContent()).toBe('Book a call');
    expect(consultRequests).toContain(CONSULT_URL);
    // The report page stays where it was (the click's default was the bridge's to take).
    expect(page.url()).toBe(shareUrl());
    await popup.close();
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it("announces a #scheduleBtn click with postMessage, through the share page, to an embedding page of the portal's origin", async () => {
    const page = await newPage();
    // An embedding page on the portal's origin (answered by the test, not the portal) that
    // records what the share page posts to it: the bridge tells the share page, which passes
    // The message on to the portal's origin only.
    const embedUrl = `${portal!.url}/test-embedder.html`;
    await page.route(embedUrl, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: `<!doctype html><title>embedder</title>
<script>
  window.svcMessages = [];
  window.addEventListener('message', function (e) { window.svcMessages.push({ data: e.data, origin: e.origin }); });
</script>
<iframe id="report" style="width:900px;height:600px" src="${shareUrl()}"></iframe>`,
      }),
    );
    await page.goto(embedUrl);
    const frame = await reportFrame(page);
    await frame.locator('#probe[data-done="1"]').waitFor({ state: 'attached', timeout: 15_000 });
    expect(await frame.locator('#scheduleBtn').getAttribute('data-svc-bridge')).toBe('wired');

    const [popup] = await Promise.all([
      context!.waitForEvent('page', { timeout: 15_000 }),
      frame.locator('#scheduleBtn').click(),
    ]);
    await popup.waitForLoadState('load');
    expect(popup.url()).toBe(`${portal!.url}/share/consultation?token=${token}`);
    await popup.close();

    await expect
      .poll(() => page.evaluate('window.svcMessages'))
      .toEqual([{ data: { type: 'svc-share:schedule-consultation', session_id: sessionId }, origin: portal!.url }]);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('switches the frame to the executive summary from the label, again in an opaque origin', async () => {
    const page = await newPage();
    await page.goto(shareUrl());
    await readProbe(await reportFrame(page));
    const button = page.locator('#svc-share-label').getByRole('button', { name: 'Executive summary' });
    await button.click();
    const frame = await reportFrame(page, 'exec_summary.html');
    expect(await button.getAttribute('aria-pressed')).toBe('true');
    const probe = await readProbe(frame);
    expectOpaqueOrigin(probe);
    expect(probe.printView).toBeNull();
    expect(await frame.locator('h1').textContent()).toBe('Executive summary');
    expect(page.url()).toBe(shareUrl());
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('serves report.html for viewing (/api/download mode=view) in an opaque origin too', async () => {
    const page = await newPage();
    const response = await page.goto(viewUrl('report.html'));
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-disposition']).toBe('inline');
    expect(response?.headers()['content-security-policy']).toMatch(/^sandbox allow-scripts; /);
    const probe = await readProbe(page);
    expectOpaqueOrigin(probe);
    expect(probe.printView).toBe(PRINT_VIEW);
    // The stored report as uploaded: no bridge here.
    expect(await page.locator('script[data-svc-share-bridge]').count()).toBe(0);
    expect(await page.locator('#svc-share-banner').count()).toBe(0);
    expect(await page.locator('#consultation-section.consultation-section > #scheduleBtn').count()).toBe(1);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('renders the API docs page under its own CSP, without violations', async () => {
    const page = await newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    const response = await page.goto(`${portal!.url}/api/docs/`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response?.headers()['x-frame-options']).toBe('DENY');
    const title = page.locator('.swagger-ui .info .title');
    await title.waitFor({ state: 'visible', timeout: 60_000 });
    expect(await title.textContent()).toContain('Scan collection portal API');
    expect(violations).toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('renders the share page to a PNG screenshot', async () => {
    const page = await newPage();
    await page.goto(shareUrl());
    await readProbe(await reportFrame(page));
    await page.locator('#svc-share-label').waitFor({ state: 'visible' });
    const file = path.join(screenshotDir!, 'share-page.png');
    await page.screenshot({ path: file, fullPage: true });
    const png = await fs.readFile(file);
    expect(png.length).toBeGreaterThan(1000);
    expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
    expect(png.readUInt32BE(16)).toBe(1024);
    expect(png.readUInt32BE(20)).toBeGreaterThan(0);
    if (screenshotsWanted()) {
      await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
      await fs.copyFile(file, path.join(SCREENSHOT_DIR, 'share-page.png'));
    }
    await page.close();
  });
});
