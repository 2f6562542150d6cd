import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';
import { brandingFromEnv, renderExecSummary, renderReport } from '@svc/client/engine';
import { launchChromium } from '@svc/test-support/chromium';
import { HOSTILE_EVIDENCE, reportSession } from '@svc/test-support/report-session';

/**
 * A generated report on the portal's share page (the bridge goes in at the LAST
 * closing body tag): uploaded to a real portal with the upload endpoint, read back raw from
 * the share page's frame and opened in Chromium, where the report and the bridge both work
 * in the sandboxed frame under the portal's label, and the report loads nothing from
 * anywhere (the share frame's CSP allows no external source; it needs none).
 */

const BRIDGE_OPEN = '<script data-svc-share-bridge="1">';

describe('a generated report on the share page', () => {
  let portal: TestPortal | undefined;
  let browser: Browser | undefined;
  let report = '';
  let token = '';
  const sessionId = newSessionId();
  const shareUrl = () => `${portal?.url}/share/?token=${token}`;
  const frameUrl = () => `${portal?.url}/share/frame?token=${token}&file=report.html`;

  beforeAll(async () => {
    portal = await startTestPortal({ ownBaseUrl: true });
    const { doc, trend } = reportSession(true, sessionId);
    const branding = brandingFromEnv({ REPORT_FOOTER_EMAIL: 'consult@blueharbor.example' }, () => Buffer.alloc(0));
    report = renderReport({ doc, trend, branding });
    const exec = renderExecSummary({ doc, trend, branding });
    const res = await postUpload(portal.url, LEGACY_KEY, sessionParts(doc, { report, exec }));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    token = String(res.body.share_token);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  it('inserts the bridge once, at the last closing body tag, and leaves the report byte for byte', async () => {
    expect(report.split('</body>')).toHaveLength(3);
    const res = await fetch(frameUrl());
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page.split('data-svc-share-bridge')).toHaveLength(2);
    const start = page.indexOf(BRIDGE_OPEN);
    const last = report.lastIndexOf('</body>');
    expect(start).toBe(last);
    // The page is the report with one script inserted there, nothing else changed.
    const bridge = page.slice(start, start + page.length - report.length);
    expect(bridge.trimEnd().endsWith('</script>')).toBe(true);
    expect(bridge.split('</script>')).toHaveLength(2);
    expect(page).toBe(report.slice(0, last) + bridge + report.slice(last));
    expect(page.slice(start + bridge.length)).toBe('</body>\n</html>\n');
    // The report's own closing body tag in its script string is before the bridge, untouched.
    expect(page.indexOf('</body>')).toBe(report.indexOf('</body>'));
    expect(page.indexOf('</body>')).toBeLessThan(start);
  });

  it('renders the report with the bridge working in Chromium', async () => {
    if (browser === undefined) throw new Error('Chromium did not start (see beforeAll)');
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const problems: string[] = [];
    const dialogs: string[] = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const framed = page.waitForResponse((r) => r.url() === frameUrl(), { timeout: 15_000 });
    const res = await page.goto(shareUrl());
    expect(res?.status()).toBe(200);
    expect((await framed).headers()['content-security-policy']).toMatch(
      /^sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline'; /,
    );
    await page.locator('#svc-share-label').waitFor({ state: 'visible', timeout: 15_000 });
    await expect.poll(() => page.frames().some((f) => f.url() === frameUrl()), { timeout: 15_000 }).toBe(true);
    const frame = page.frames().find((f) => f.url() === frameUrl())!;
    await frame.locator('#scheduleBtn[data-svc-bridge="wired"]').waitFor({ state: 'attached', timeout: 15_000 });
    expect(await frame.locator('script[data-svc-share-bridge]').count()).toBe(1);
    expect(await frame.locator('#consultation-section.consultation-section > #scheduleBtn').count()).toBe(1);
    for (const id of ['scope', 'risk', 'trend', 'top-risks', 'findings', 'hosts', 'exceptions', 'orc-964'])
      expect(await frame.locator(`#${id}`).count(), id).toBe(1);
    expect(await frame.locator('pre.evidence', { hasText: '<script>alert(1)</script>' }).textContent()).toBe(
      HOSTILE_EVIDENCE,
    );
    expect(await frame.getByRole('img', { name: 'Risk score trend for 10.0.0.0/16' }).count()).toBe(1);
    // The report's script ran in the sandboxed frame too.
    const copy = String(await frame.evaluate('window.svcReport.printableCopy()'));
    expect(copy.endsWith('</main></body></html>')).toBe(true);
    expect(await frame.evaluate('document.body.lastElementChild.getAttribute("data-svc-share-bridge")')).toBe('1');
    // The executive summary in the same frame: it too needs nothing the CSP refuses.
    const execUrl = frameUrl().replace('report.html', 'exec_summary.html');
    const execLoaded = page.waitForEvent('framenavigated', { predicate: (f) => f.url() === execUrl, timeout: 15_000 });
    await page.locator('#svc-share-label').getByRole('button', { name: 'Executive summary' }).click();
    await (await execLoaded).waitForLoadState('load');
    const exec = page.frames().find((f) => f.url() === execUrl)!;
    expect(await exec.locator('h1').count()).toBeGreaterThan(0);
    // A refused load is a console error: none, in either document.
    expect(problems).toEqual([]);
    expect(dialogs).toEqual([]);
    await page.close();
  });
});
