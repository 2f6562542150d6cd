import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '@svc/test-support/chromium';
import { createLicense } from '@svc/test-support/factories';
import { uploadDoc } from '@svc/test-support/large-session';
import { KEV_FINDING } from '@svc/test-support/vuln-index';
import { expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';

/**
 * A known-exploited finding in the console (docs/vuln-matching.md): the KEV badge and EPSS in the
 * findings table, the Exploitation filter and the detail's Exploitation line, in a real browser
 * against a real portal; axe-clean.
 */

const CLIENT = 'kev-co';
const SESSION = '20261127_100000';
const KEV_TITLE = KEV_FINDING.title;

const doc = {
  metadata: { session_id: SESSION, client_id: CLIENT, target: '10.0.0.0/24' },
  findings: [
    KEV_FINDING,
    {
      rule_id: 'telnet-open',
      title: 'Telnet enabled',
      severity: 'critical',
      host: '10.0.0.3',
      port: 23,
      protocol: 'tcp',
    },
  ],
};

describe('known-exploited findings in the session view', () => {
  let portal: TestPortal;
  let browser: Browser;

  beforeAll(async () => {
    portal = await startConsolePortal();
    const { key } = await createLicense(portal, { tier: 'business', client_id: CLIENT });
    await uploadDoc(portal.url, key, doc);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  it('shows the KEV badge and EPSS, filters on exploitation and explains it in the detail', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, `/collect/?session=${SESSION}&client_id=${CLIENT}`);
      const rows = page.locator('section[aria-labelledby="findings-h"] tbody tr[data-finding]');
      await expect.poll(() => rows.count()).toBe(2);
      const kevRow = rows.filter({ hasText: KEV_TITLE });
      const badge = kevRow.locator('.badge.kev');
      expect(await badge.textContent()).toBe('KEV');
      expect(await badge.getAttribute('title')).toBe(
        "In CISA's Known Exploited Vulnerabilities catalogue since 2025-01-10",
      );
      expect(await kevRow.getByText('EPSS 42.0 %').count()).toBe(1);
      expect(await rows.filter({ hasText: 'Telnet enabled' }).locator('.badge.kev').count()).toBe(0);

      await page.getByLabel('Exploitation', { exact: true }).selectOption('true');
      await expect.poll(() => rows.allTextContents()).toHaveLength(1);
      expect(await rows.first().textContent()).toContain(KEV_TITLE);

      await page.getByRole('button', { name: `Details of ${KEV_TITLE} on 10.0.0.2:22/tcp` }).click();
      const panel = page.locator('aside.finding-detail');
      await expect
        .poll(() => panel.locator('dt:text-is("Exploitation") + dd').textContent())
        .toBe(
          "KEV In CISA's Known Exploited Vulnerabilities catalogue since 2025-01-10. EPSS 42.0 % (97th percentile)",
        );
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
