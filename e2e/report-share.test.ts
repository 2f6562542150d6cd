import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../packages/portal/tests/helpers/free-port.ts';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '../packages/portal/tests/helpers/portal.ts';
import { newSessionId, postUpload, sessionParts } from '../packages/portal/tests/helpers/upload.ts';
import { brandingFromEnv, renderExecSummary, renderReport } from '../packages/client/src/report/index.ts';
import { launchChromium } from '../test-support/chromium.ts';
import { HOSTILE_EVIDENCE, reportSession } from '../packages/client/tests/helpers/report-session.ts';

/**
 * A generated report on the portal's share page (SPEC: the bridge goes in at the LAST
 * closing body tag): uploaded to a real portal with the upload endpoint, read back raw and
 * opened in Chromium, where the report and the bridge both work in the sandboxed page.
 */

const BRIDGE_OPEN = '<script data-svc-share-bridge="1">';

describe('a generated report on the share page', () => {
  let portal: TestPortal | undefined;
  let browser: Browser | undefined;
  let report = '';
  let token = '';
  const sessionId = newSessionId();
  const shareUrl = () => `${portal?.url}/share/?token=${token}`;

  beforeAll(async () => {
    const port = await freePort();
    portal = await startTestPortal({ env: { PORT: String(port), SVC_BASE_URL: `http://127.0.0.1:${port}` } });
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
    const res = await fetch(shareUrl());
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
    const res = await page.goto(shareUrl());
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toMatch(/^sandbox allow-scripts /);
    await page.locator('#svc-share-banner').waitFor({ state: 'visible', timeout: 15_000 });
    expect(await page.locator('#scheduleBtn').getAttribute('data-svc-bridge')).toBe('wired');
    expect(await page.locator('script[data-svc-share-bridge]').count()).toBe(1);
    expect(await page.locator('#consultation-section.consultation-section > #scheduleBtn').count()).toBe(1);
    for (const id of ['scope', 'risk', 'trend', 'top-risks', 'findings', 'hosts', 'exceptions', 'orc-964'])
      expect(await page.locator(`#${id}`).count(), id).toBe(1);
    expect(await page.locator('pre.evidence', { hasText: '<script>alert(1)</script>' }).textContent()).toBe(
      HOSTILE_EVIDENCE,
    );
    expect(await page.getByRole('img', { name: 'Risk score trend for 10.0.0.0/16' }).count()).toBe(1);
    // The report's script ran in the sandboxed page too.
    const copy = String(await page.evaluate('window.svcReport.printableCopy()'));
    expect(copy.endsWith('</main></body></html>')).toBe(true);
    expect(await page.evaluate('document.body.lastElementChild.getAttribute("data-svc-share-bridge")')).toBe('1');
    expect(problems).toEqual([]);
    expect(dialogs).toEqual([]);
    await page.close();
  });
});
