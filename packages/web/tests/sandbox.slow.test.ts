import type { Browser, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { hostileReport } from '@svc/test-support/hostile-report';
import { createTestCa, HttpsReceiver, type TestCa } from '@svc/test-support/https-receiver';
import { LEGACY_KEY } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';
import { launchChromium } from '@svc/test-support/chromium';
import { openPage, WIDTHS } from './helpers/browser.ts';
import { signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';

/**
 * The session view shows uploaded reports in frames. A hostile report must not get the
 * console's token (from the console's storage or document), must not call the API with it,
 * and must not navigate the console away: the frame is sandboxed, in an opaque origin, and
 * its CSP allows no requests.
 *
 * A phishing report draws "sign in again" inside the frame: what is
 * typed there must reach nobody (no external loads at all, checked against a real HTTPS
 * receiver whose certificate the browser accepts), it opens no pop-up, submits no form,
 * leaves the console where it is, and a bar above the frame says whose content it is.
 */

const HOSTILE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Report</title></head><body>
<h1>Quarterly report</h1>
<pre id="probe"></pre>
<script>
(function () {
  var out = {};
  function attempt(name, fn) {
    try { out[name] = { ok: true, value: String(fn()) }; }
    catch (e) { out[name] = { ok: false, error: String(e && e.name) }; }
  }
  attempt('parentStorage', function () { return parent.sessionStorage.getItem('svc.console.tokens'); });
  attempt('topStorage', function () { return top.sessionStorage.length; });
  attempt('parentDocument', function () { return parent.document.body.innerHTML.length; });
  attempt('ownStorage', function () { return sessionStorage.length; });
  attempt('ownLocalStorage', function () { return localStorage.length; });
  attempt('cookie', function () { return document.cookie; });
  attempt('navigateTop', function () { top.location.href = '/console/stolen'; return 'assigned'; });
  var stolen = out.parentStorage.ok ? out.parentStorage.value : 'none';
  var settle = function (r) { out.api = r; done(); };
  var t = setTimeout(function () { settle({ settled: false }); }, 5000);
  fetch('/api/sessions', { headers: { 'x-identity-token': stolen } }).then(
    function (res) { clearTimeout(t); settle({ settled: true, ok: true, status: res.status }); },
    function (e) { clearTimeout(t); settle({ settled: true, ok: false, error: String(e && e.name) }); }
  );
  function done() {
    var pre = document.getElementById('probe');
    pre.textContent = JSON.stringify(out);
    pre.setAttribute('data-done', '1');
  }
})();
</script>
</body></html>`;

interface Attempt {
  ok: boolean;
  value?: string;
  error?: string;
}

describe('the report frame cannot reach the console', () => {
  let portal: TestPortal;
  let browser: Browser;
  const sessionId = newSessionId();

  beforeAll(async () => {
    portal = await startConsolePortal();
    const res = await postUpload(
      portal.url,
      LEGACY_KEY,
      sessionParts(
        { metadata: { session_id: sessionId, client: 'Hostile Inc', target: '10.66.0.0/24' } },
        { report: HOSTILE, exec: HOSTILE },
      ),
    );
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  it.each(['Scan report', 'Executive summary'])(
    'the %s runs its scripts but gets neither the token, nor the API, nor the top window',
    async (title) => {
      const p = await openPage(browser, WIDTHS.desktop);
      const { page } = p;
      const apiCalls: string[] = [];
      page.on('request', (r) => {
        if (new URL(r.url()).pathname.startsWith('/api/sessions') && r.frame() !== page.mainFrame())
          apiCalls.push(r.url());
      });
      try {
        await signIn(page, portal, undefined, `/collect/?session=${sessionId}`);
        const viewUrl = page.url();
        const token = await page.evaluate(() => sessionStorage.getItem('svc.console.tokens'));
        expect(token).toContain('accessToken');
        if (title === 'Executive summary') await page.getByRole('button', { name: 'Executive summary' }).click();
        const frame = page.frameLocator(`iframe[title="${title}"]`);
        const probe = frame.locator('#probe[data-done="1"]');
        await probe.waitFor({ state: 'attached', timeout: 20_000 });
        const out = JSON.parse((await probe.textContent()) ?? '{}') as Record<string, Attempt> & {
          api: { settled: boolean; ok?: boolean; status?: number };
        };
        for (const name of ['parentStorage', 'topStorage', 'parentDocument', 'ownStorage', 'ownLocalStorage', 'cookie'])
          expect(out[name], name).toMatchObject({ ok: false, error: 'SecurityError' });
        expect(out['navigateTop']).toMatchObject({ ok: false, error: 'SecurityError' });
        expect(out.api).toMatchObject({ settled: true, ok: false });
        expect(apiCalls).toEqual([]);
        // The console is where it was and still signed in.
        expect(page.url()).toBe(viewUrl);
        expect(await page.getByRole('button', { name: 'Sign out', exact: true }).isVisible()).toBe(true);
        expect(await page.evaluate(() => sessionStorage.getItem('svc.console.tokens'))).toBe(token);
      } finally {
        await p.close();
      }
    },
  );
});

describe('a phishing report in the session view', () => {
  let portal: TestPortal;
  let browser: Browser;
  let ca: TestCa;
  let receiver: HttpsReceiver;
  const sessionId = newSessionId();

  beforeAll(async () => {
    ca = await createTestCa();
    receiver = await HttpsReceiver.start(ca);
    portal = await startConsolePortal();
    const { key } = await createLicense(portal, { tier: 'business', client_id: 'phish-co' });
    const report = hostileReport(`https://127.0.0.1:${receiver.port}`);
    const res = await postUpload(
      portal.url,
      key,
      sessionParts({ metadata: { session_id: sessionId, target: '10.66.0.0/24' } }, { report, exec: report }),
    );
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await receiver?.close();
    await ca?.cleanup();
  });

  /** The signed-in session view, the report's frame, and every console message of the page's frames. */
  async function openReport() {
    const p = await openPage(browser, WIDTHS.desktop, { ignoreHTTPSErrors: true });
    const messages: string[] = [];
    p.page.on('console', (m) => messages.push(m.text()));
    await signIn(p.page, portal, undefined, `/collect/?session=${sessionId}&client_id=phish-co`);
    await expect.poll(() => messages.some((m) => m.startsWith('probe ready')), { timeout: 20_000 }).toBe(true);
    // The sections above the report load on their own and push it down as they arrive: a click
    // aimed at the frame while one still loads can land on the page instead.
    await expect.poll(() => p.page.locator('[aria-busy="true"]').count(), { timeout: 20_000 }).toBe(0);
    const frame: Frame = p.page.frames().find((f) => f.url().includes('/collect/frame?'))!;
    const logged = async (pattern: RegExp, count = 1) => {
      const matching = () => messages.filter((m) => pattern.test(m));
      await expect.poll(() => matching().length, { timeout: 15_000 }).toBeGreaterThanOrEqual(count);
      return matching();
    };
    return { ...p, frame, messages, logged };
  }

  it('is framed for scripts only, under a bar that says whose content it is', async () => {
    const p = await openReport();
    try {
      const iframe = p.page.locator('iframe.report-frame');
      expect(await iframe.getAttribute('sandbox')).toBe('allow-scripts');
      const label = p.page.locator('#report-label');
      expect(await label.isVisible()).toBe(true);
      expect((await label.textContent())?.replace(/\s+/g, ' ')).toBe(
        'Scanner report uploaded by client phish-co — the content below is not part of the portal; the portal never asks for your password here.',
      );
      expect(await iframe.getAttribute('aria-describedby')).toBe('report-label');
      // The bar sits right above the frame.
      const bar = (await label.boundingBox())!;
      const box = (await iframe.boundingBox())!;
      expect(Math.round(bar.y + bar.height)).toBe(Math.round(box.y));
    } finally {
      await p.close();
    }
  });

  it('sends what is typed into its sign-in form nowhere: every image, font and style URL is refused', async () => {
    const p = await openReport();
    try {
      await p.frame.locator('#password').pressSequentially('hunter2');
      const images = await p.logged(/^csp-violation img-src https:\/\/127\.0\.0\.1:\d+\/k\?c=/, 7);
      expect(images.map((m) => new URL(m.split(' ')[2]!).searchParams.get('c')).join('')).toBe('hunter2');
      await p.logged(/^csp-violation img-src https:\/\/127\.0\.0\.1:\d+\/css-focus\.png$/);
      await p.logged(/^csp-violation font-src https:\/\/127\.0\.0\.1:\d+\/font\.woff2$/);
      expect(receiver.requests).toEqual([]);
      expect(receiver.connections).toBe(0);
    } finally {
      await p.close();
    }
  });

  it('opens no pop-up and submits no form', async () => {
    const p = await openReport();
    try {
      const context = p.page.context();
      await p.frame.locator('#popup').click();
      await p.logged(/^probe popup null$/);
      await p.logged(
        /^Blocked opening 'https:\/\/127\.0\.0\.1:\d+\/popup' in a new window because the request was made in a sandboxed frame whose 'allow-popups' permission is not set\.$/,
      );
      expect(context.pages()).toEqual([p.page]);
      await p.frame.locator('#password').fill('hunter2');
      await p.frame.locator('#signin').click();
      await p.logged(
        /^Blocked form submission to 'https:\/\/127\.0\.0\.1:\d+\/form' because the form's frame is sandboxed and the 'allow-forms' permission is not set\.$/,
      );
      expect(receiver.requests).toEqual([]);
      expect(receiver.connections).toBe(0);
    } finally {
      await p.close();
    }
  });

  it('navigates neither the console nor its own frame away', async () => {
    const p = await openReport();
    try {
      const viewUrl = p.page.url();
      await p.frame.locator('#top').click();
      await p.logged(/^probe top threw SecurityError$/);
      await p.frame.locator('#self').click();
      await p.logged(
        /^Framing 'https:\/\/127\.0\.0\.1:\d+\/' violates the following Content Security Policy directive: "frame-src 'self'"/,
      );
      expect(p.page.url()).toBe(viewUrl);
      expect(p.page.frames().some((f) => f.url().includes(String(receiver.port)))).toBe(false);
      expect(await p.page.getByRole('button', { name: 'Sign out', exact: true }).isVisible()).toBe(true);
      // Chromium may open a connection to the refused frame's host before refusing (see the
      // docs/security.md#report-sandbox-and-response-headers); no request is ever sent on it.
      expect(receiver.requests).toEqual([]);
    } finally {
      await p.close();
    }
  });
});
