import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { launchChromium } from '@svc/test-support/chromium';
import { expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { largeSessionDoc, uploadDoc } from '@svc/test-support/large-session';

/**
 * The session view of a 10,000-finding session (≈ 12 MB file) loads the summary and the first
 * page of findings only: no request downloads the session file, and the first page is a few
 * kilobytes. How fast that is, throttled and not, is measured by bench/findings.ts (timing
 * targets live in bench/, not in tests).
 */

const CLIENT = 'scale-co';
const FINDINGS = 10_000;

describe('session view of a 10,000-finding session', () => {
  let portal: TestPortal;
  let browser: Browser;
  let sessionId: string;

  beforeAll(async () => {
    portal = await startConsolePortal();
    const key = (await createLicense(portal, { tier: 'business', client_id: CLIENT })).key;
    sessionId = await uploadDoc(portal.url, key, largeSessionDoc('20250601_120000_scale', CLIENT, FINDINGS));
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  it('requests no whole-session download; the first findings page is small', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const api: { url: string; bytes: Promise<number> }[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/'))
        api.push({
          url: r.url(),
          bytes: r
            .response()
            .then((res) => (res === null ? 0 : res.body().then((b) => b.length)))
            .catch(() => 0),
        });
    });
    try {
      await signIn(page, portal, undefined, `/collect/?session=${sessionId}&client_id=${CLIENT}`);
      const rows = page.locator('section[aria-labelledby="findings-h"] tbody tr[data-finding]');
      await rows.first().waitFor();
      expect(await rows.count()).toBe(25);
      await expect.poll(() => page.locator('.findings-count').textContent()).toBe('10,000 findings, page 1 of 400');
      // The first row: the most severe, last in file order among its severity (ties descend with the order).
      expect(await rows.first().locator('td').nth(2).textContent()).toBe('Telnet service exposed');

      expect(api.filter((r) => r.url.includes('/api/download'))).toEqual([]);
      const findings = api.filter((r) => new URL(r.url).pathname === `/api/sessions/${sessionId}/findings`);
      expect(findings.length).toBeGreaterThanOrEqual(1);
      const firstPageBytes = await findings[0]!.bytes;
      expect(firstPageBytes).toBeGreaterThan(1_000);
      expect(firstPageBytes).toBeLessThan(32 * 1024);
      // Everything the view asked the API for, together, is a small fraction of the 12 MB file.
      const total = (await Promise.all(api.map((r) => r.bytes))).reduce((a, b) => a + b, 0);
      expect(total).toBeLessThan(256 * 1024);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
