import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_KEY } from '../../portal/tests/helpers/portal.ts';
import { newSessionId, postUpload, sessionParts } from '../../portal/tests/helpers/upload.ts';
import { launchChromium } from '../../../test-support/chromium.ts';
import { openPage, WIDTHS } from './helpers/browser.ts';
import { signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';

/**
 * The session view shows uploaded reports in frames. A hostile report must not get the
 * console's token (from the console's storage or document), must not call the API with it,
 * and must not navigate the console away: the frame is sandboxed, in an opaque origin, and
 * its CSP allows no requests.
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
