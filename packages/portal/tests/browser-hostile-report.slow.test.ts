import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exfiltratingSignIn, hostileReport } from '@svc/test-support/hostile-report';
import { createTestCa, HttpsReceiver, type TestCa } from '@svc/test-support/https-receiver';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { assertChromiumInstalled, CHROMIUM, launchChromium } from '@svc/test-support/chromium';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';

/**
 * A hostile report in Debian's Chromium. The report draws "your session expired, sign in
 * again" and sends every keystroke out as an image request, with a CSS background and a web
 * font as well; it submits its form,
 * sends a beacon, sets a `<base>`, opens a pop-up, navigates the top window and its own frame,
 * and is framed by a site that may not. A second report puts the typed password into the
 * address of a pop-up, the top window, its own frame and its form's submission. Everything
 * aims at a real HTTPS receiver on 127.0.0.1 (the browser context accepts its test
 * certificate, so only the portal's headers stand in the way) and the test asserts what it
 * received: nothing. Every "nothing arrived" is read after the browser has reported the
 * refusal (a CSP violation, or its console message for a sandbox refusal), which it does
 * before any request would leave.
 *
 * The portal allows exactly one framer (SVC_FRAME_ANCESTORS = the "allowed" server) so
 * that a framed share page can be observed; any other origin is refused.
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
    req.on('data', (c: Buffer) => chunks.push(c));
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
<iframe id="share" style="width:900px;height:600px" src="${shareUrl}"></iframe>`;

/** A page with every console message (of every frame) it logged. */
interface Watched {
  page: Page;
  messages: string[];
}

describe('a hostile report in Chromium', () => {
  let portal: TestPortal | undefined;
  let ca: TestCa | undefined;
  let receiver: HttpsReceiver | undefined;
  let allowedFramer: Awaited<ReturnType<typeof recordingServer>> | undefined;
  let otherFramer: Awaited<ReturnType<typeof recordingServer>> | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  const sessionId = newSessionId();
  let token = '';
  const signInId = newSessionId();
  let signInToken = '';

  const shareUrl = () => `${portal!.url}/share/?token=${token}`;
  const viewUrl = (file: string) =>
    `${portal!.url}/api/download?${new URLSearchParams({ session: sessionId, file, mode: 'view', token })}`;
  /** What the receiver got: it must stay empty. */
  const stolen = () => receiver!.requests;

  function requireChromium(): void {
    assertChromiumInstalled();
    if (context === undefined) throw new Error('the browser did not start (see the beforeAll error)');
  }

  async function open(url: string): Promise<Watched> {
    requireChromium();
    const page = await context!.newPage();
    const messages: string[] = [];
    page.on('console', (m) => messages.push(m.text()));
    await page.goto(url);
    return { page, messages };
  }

  /** The document that holds the report: the share page's frame, or the page itself. */
  async function reportFrame(w: Watched): Promise<Frame> {
    await expect.poll(() => w.messages.some((m) => m.startsWith('probe ready')), { timeout: 15_000 }).toBe(true);
    return w.page.frames().find((f) => f.url().includes('/share/frame?')) ?? w.page.mainFrame();
  }

  /** Waits until a console message matches (the browser's own refusals are console messages too). */
  async function logged(w: Watched, pattern: RegExp, count = 1): Promise<string[]> {
    const matching = () => w.messages.filter((m) => pattern.test(m));
    await expect.poll(() => matching().length, { timeout: 15_000 }).toBeGreaterThanOrEqual(count);
    return matching();
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) return;
    ca = await createTestCa();
    receiver = await HttpsReceiver.start(ca);
    allowedFramer = await recordingServer(() => framerPage(shareUrl()));
    otherFramer = await recordingServer(() => framerPage(shareUrl()));
    portal = await startTestPortal({ ownBaseUrl: true, env: { SVC_FRAME_ANCESTORS: allowedFramer.url } });
    const https = `https://127.0.0.1:${receiver.port}`;
    const res = await postUpload(
      portal.url,
      LEGACY_KEY,
      sessionParts(
        {
          metadata: { session_id: sessionId, client: 'Acme Corp', target: '10.0.0.0/24' },
          summary: { risk_score: 50, risk_grade: 'C', total_findings: 1, total_hosts: 1 },
        },
        { report: hostileReport(https), exec: hostileReport(https) },
      ),
    );
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    token = String(res.body.share_token);
    const signIn = await postUpload(
      portal.url,
      LEGACY_KEY,
      sessionParts(
        {
          metadata: { session_id: signInId, client: 'Acme Corp', target: '10.0.0.0/24' },
          summary: { risk_score: 50, risk_grade: 'C', total_findings: 1, total_hosts: 1 },
        },
        { report: exfiltratingSignIn(https) },
      ),
    );
    if (signIn.status !== 200) throw new Error(`upload: ${signIn.status} ${signIn.text}`);
    signInToken = String(signIn.body.share_token);
    browser = await launchChromium();
    // The receiver's certificate is accepted: nothing but the portal's headers may stop a request.
    context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1024, height: 768 } });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await portal?.close();
    await receiver?.close();
    await allowedFramer?.close();
    await otherFramer?.close();
    await ca?.cleanup();
  });

  it("the share page shows the report framed under the portal's label, never as the top document", async () => {
    const w = await open(shareUrl());
    const frame = await reportFrame(w);
    expect(frame).not.toBe(w.page.mainFrame());
    expect(frame.url()).toBe(`${portal!.url}/share/frame?token=${token}&file=report.html`);
    const label = w.page.locator('#svc-share-label');
    expect(await label.isVisible()).toBe(true);
    expect(await label.locator('p').first().textContent()).toBe(
      'Scanner report uploaded by Acme Corp — the content below is not part of the portal; the portal never asks for your password here.',
    );
    expect(await w.page.locator('iframe#svc-report').getAttribute('sandbox')).toBe('allow-scripts');
    // The bar stays in view while the report scrolls in its frame.
    await frame.locator('#sentinel').scrollIntoViewIfNeeded();
    expect(await label.boundingBox()).toMatchObject({ x: 0, y: 0 });
    await w.page.close();
  });

  it.each([
    ['the share page', () => shareUrl()],
    ['the inline view', () => viewUrl('report.html')],
  ])(
    '%s: keystrokes typed into a fake sign-in form go nowhere (img-src, style and font URLs refused)',
    async (_name, url) => {
      const w = await open(url());
      const frame = await reportFrame(w);
      await frame.locator('#password').pressSequentially('hunter2');
      // One refused image per keystroke, and the stylesheet's https: font and background.
      const images = await logged(w, /^csp-violation img-src https:\/\/127\.0\.0\.1:\d+\/k\?c=/, 7);
      expect(images.map((m) => new URL(m.split(' ')[2]!).searchParams.get('c')).join('')).toBe('hunter2');
      await logged(w, /^csp-violation img-src https:\/\/127\.0\.0\.1:\d+\/css-focus\.png$/);
      await logged(w, /^csp-violation font-src https:\/\/127\.0\.0\.1:\d+\/font\.woff2$/);
      // Nothing reached the receiver. Its connection count is not asserted: Chromium may open a
      // speculative connection to a host a page names (a preconnect, before CSP is consulted),
      // which carries no request and none of the keystrokes; one showed in a loaded run.
      expect(receiver!.requests).toEqual([]);
      await w.page.close();
    },
  );

  it.each([
    ['the share page', () => shareUrl()],
    ['the inline view', () => viewUrl('report.html')],
  ])('%s: the form submits nowhere, a beacon is refused, a <base> is ignored', async (_name, url) => {
    const w = await open(url());
    const frame = await reportFrame(w);
    const frameUrl = frame.url();
    await frame.locator('#password').fill('hunter2');
    await frame.locator('#signin').click();
    // No allow-forms: the sandbox refuses the submission before form-action is even asked.
    await logged(
      w,
      /^Blocked form submission to 'https:\/\/127\.0\.0\.1:\d+\/form' because the form's frame is sandboxed and the 'allow-forms' permission is not set\.$/,
    );
    await frame.locator('#beacon').click();
    await logged(w, /^csp-violation connect-src https:\/\/127\.0\.0\.1:\d+\/beacon$/);
    await logged(w, /^csp-violation base-uri /);
    expect(w.messages).toContain(`probe ready ${frameUrl}`);
    expect(await frame.evaluate('document.getElementById("relative").href')).toBe(
      new URL('relative-link', frameUrl).href,
    );
    expect(frame.url()).toBe(frameUrl);
    expect(stolen()).toEqual([]);
    await w.page.close();
  });

  it('the share page: the report navigates neither the tab nor its own frame away', async () => {
    const w = await open(shareUrl());
    const frame = await reportFrame(w);
    const frameUrl = frame.url();
    await frame.locator('#top').click();
    // No allow-top-navigation: the assignment throws, the tab stays.
    await logged(w, /^probe top threw SecurityError$/);
    // Its own frame: the share page's frame-src 'self' refuses any other site.
    await frame.locator('#self').click();
    await logged(
      w,
      /^Framing 'https:\/\/127\.0\.0\.1:\d+\/' violates the following Content Security Policy directive: "frame-src 'self'"/,
    );
    expect(w.page.url()).toBe(shareUrl());
    // The frame shows the browser's error page at most: never the other site.
    expect(w.page.frames().map((f) => f.url())).toEqual([
      shareUrl(),
      expect.not.stringContaining(String(receiver!.port)),
    ]);
    expect(frameUrl).toContain('/share/frame?');
    expect(stolen()).toEqual([]);
    await w.page.close();
  });

  it.each([
    ['the share page', () => shareUrl()],
    ['the inline view', () => viewUrl('report.html')],
  ])('%s opens no pop-up', async (_name, url) => {
    const w = await open(url());
    const frame = await reportFrame(w);
    const pagesBefore = context!.pages().length;
    await frame.locator('#popup').click();
    await logged(w, /^probe popup null$/);
    await logged(
      w,
      /^Blocked opening 'https:\/\/127\.0\.0\.1:\d+\/popup' in a new window because the request was made in a sandboxed frame whose 'allow-popups' permission is not set\.$/,
    );
    expect(context!.pages()).toHaveLength(pagesBefore);
    expect(stolen()).toEqual([]);
    await w.page.close();
  });

  it('the share page: a password typed into a fake sign-in form leaves in no pop-up, form, top or frame address', async () => {
    const url = `${portal!.url}/share/?token=${signInToken}`;
    const w = await open(url);
    await expect.poll(() => w.messages.includes('exfil ready'), { timeout: 15_000 }).toBe(true);
    const frame = w.page.frames().find((f) => f.url().includes('/share/frame?'))!;
    const pagesBefore = context!.pages().length;
    const blockedOpen = (path: string) =>
      new RegExp(
        `^Blocked opening 'https://127\\.0\\.0\\.1:\\d+/${path}' in a new window because the request was made in a sandboxed frame whose 'allow-popups' permission is not set\\.$`,
      );

    await frame.locator('#user').fill('alice@example.com');
    await frame.locator('#password').pressSequentially('hunter2');
    // A pop-up per keystroke, each refused.
    await logged(w, /^exfil open-input null$/, 7);
    await logged(w, blockedOpen('input\\?p=hunter2'));

    await frame.locator('#signin').click();
    await logged(w, /^exfil open-submit null$/);
    await logged(w, blockedOpen('open\\?p=hunter2'));
    // No allow-top-navigation: the assignment throws.
    await logged(w, /^exfil top threw SecurityError$/);
    // No allow-forms (and form-action 'none'): the submission never starts.
    await logged(
      w,
      /^Blocked form submission to 'https:\/\/127\.0\.0\.1:\d+\/submit' because the form's frame is sandboxed and the 'allow-forms' permission is not set\.$/,
    );
    // Its own frame: the share page's frame-src 'self' refuses the receiver (the frame's
    // document is on its way out by then, so its own log line may not arrive).
    await logged(
      w,
      /^Framing 'https:\/\/127\.0\.0\.1:\d+\/' violates the following Content Security Policy directive: "frame-src 'self'"/,
    );

    // The share page stays, with its bar; no window opened; the receiver got nothing.
    expect(w.page.url()).toBe(url);
    expect(await w.page.locator('#svc-share-label').isVisible()).toBe(true);
    expect(context!.pages()).toHaveLength(pagesBefore);
    expect(w.page.frames().map((f) => f.url())).toEqual([url, expect.not.stringContaining(String(receiver!.port))]);
    expect(stolen()).toEqual([]);
    await w.page.close();
  });

  it('framed by the allowed site: the share page cannot navigate it, and nothing is posted to a foreign origin', async () => {
    requireChromium();
    const w: Watched = { page: await context!.newPage(), messages: [] };
    w.page.on('console', (m) => w.messages.push(m.text()));
    await w.page.goto(`${allowedFramer!.url}/`);
    const frame = await reportFrame(w);
    expect(frame.parentFrame()?.url()).toBe(shareUrl());
    await frame.locator('#top').click();
    await logged(w, /^probe top threw SecurityError$/);
    expect(await frame.locator('#scheduleBtn').getAttribute('data-svc-bridge')).toBe('wired');
    const [consultation] = await Promise.all([
      context!.waitForEvent('page', { timeout: 15_000 }),
      frame.locator('#scheduleBtn').click(),
    ]);
    // The report's own sentinel (posted after the bridge's handler ran) arrives; the
    // bridge's message, passed on by the share page to the portal's origin only, does not.
    await expect.poll(() => w.page.evaluate('window.svcMessages.length'), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await w.page.evaluate('window.svcMessages')).toEqual([{ data: { type: 'sentinel' }, origin: 'null' }]);
    expect(w.page.url()).toBe(`${allowedFramer!.url}/`);
    // The share page opened its own consultation page: the portal's, and this report names no contact.
    await consultation.waitForLoadState('load');
    expect(consultation.url()).toBe(`${portal!.url}/share/consultation?token=${token}`);
    expect(await consultation.locator('h1').textContent()).toBe('No consultation contact');
    await consultation.close();
    await w.page.close();
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
    // Chromium replaces the refused document with its error page: the report never loads.
    const child = page.frames().find((f) => f !== page.mainFrame());
    expect(child).toBeDefined();
    await expect.poll(() => child!.url(), { timeout: 10_000 }).toBe('chrome-error://chromewebdata/');
    expect(page.frames().some((f) => f.url().includes('/share/frame?'))).toBe(false);
    await page.close();
    expect(stolen()).toEqual([]);
    expect(otherFramer!.received.map((r) => r.url).filter((u) => u !== '/favicon.ico')).toEqual(['/']);
  });
});
