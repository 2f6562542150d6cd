import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingFingerprint } from '@svc/protocol/node';
import { createLicense } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { uploadDoc } from '@svc/test-support/large-session';
import { type ConsolePage, expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { createScopedUser, signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { noSidewaysScroll, poll } from './helpers/console-ui.ts';
import { screenshot } from '@svc/test-support/screenshots';

/**
 * The overview's clients and targets (/console/overview) in a real browser against a real
 * portal: per client and per target the open criticals and highs, overdue and KEV findings of
 * record, each a link to the portfolio page (/console/findings) whose count is that number;
 * the last scan and each target's own trend. As admin and as a customer user of one client,
 * at 390 and 1440 px, axe clean. Everything was scanned in January 2025, so every open
 * critical and high is overdue.
 */

const ACME = 'acme-posture';
const BETA = 'beta-posture';
const MEMBER = { email: 'member@acme-posture.test', password: 'Member-posture-pass-1' };
const fp = (net: number, i: number) =>
  findingFingerprint({ rule_id: `svc.rule.${i}`, host: `10.${net}.0.${i + 1}`, port: 443, protocol: 'tcp' });

/** `n` findings on 10.<net>.0.<i+1>, critical for even i, high for odd; the first on the KEV list. */
function scanDoc(clientId: string, sessionId: string, target: string, net: number, n: number) {
  const at = `2025-01-${sessionId.slice(6, 8)}T12:00:00.000Z`;
  const findings = Array.from({ length: n }, (_, i) => ({
    id: `f-${i}`,
    rule_id: `svc.rule.${i}`,
    title: `Weakness ${i}`,
    severity: i % 2 === 0 ? 'critical' : 'high',
    host: `10.${net}.0.${i + 1}`,
    port: 443,
    protocol: 'tcp',
    fingerprint: fp(net, i),
    ...(i === 0 ? { kev: true, references: { cve: ['CVE-2024-3400'] } } : {}),
  }));
  return {
    metadata: { session_id: sessionId, client_id: clientId, client: clientId, target, started_at: at, finished_at: at },
    coverage: { hosts: findings.map((f) => f.host), ports: { tcp: '1-1024' }, profile: 'quick_recon', tools: ['nmap'] },
    findings,
    remediation: findings.map((f) => ({
      title: f.title,
      severity: f.severity,
      host: f.host,
      fingerprint: f.fingerprint,
      status: 'new',
      note: '',
      first_seen: sessionId,
      exception_status: null,
    })),
    remediation_resolved: [],
  };
}

describe('the overview: clients and targets', () => {
  let portal: TestPortal;
  let browser: Browser;

  beforeAll(async () => {
    portal = await startConsolePortal();
    const admin = await portal.adminToken();
    browser = await launchChromium();
    const acme = (await createLicense(portal, { tier: 'business', client_id: ACME })).key;
    const beta = (await createLicense(portal, { tier: 'business', client_id: BETA })).key;
    // acme-net: criticals 0 (KEV), 2, 4, highs 1, 3, 5; acme-dmz, scanned twice: a KEV critical
    // and a high, then a critical more; beta-net: criticals 0 (KEV), 2, highs 1, 3.
    await uploadDoc(portal.url, acme, scanDoc(ACME, '20250110_120000', 'acme-net', 1, 6));
    await uploadDoc(portal.url, acme, scanDoc(ACME, '20250111_120000', 'acme-dmz', 2, 2));
    await uploadDoc(portal.url, acme, scanDoc(ACME, '20250112_120000', 'acme-dmz', 2, 3));
    await uploadDoc(portal.url, beta, scanDoc(BETA, '20250113_120000', 'beta-net', 3, 4));
    // An exception on acme-net's critical 2: no longer one to act on.
    const res = await http(portal.url, 'POST', '/api/findings/bulk', {
      headers: withToken(admin),
      json: {
        client_id: ACME,
        target: 'acme-net',
        fingerprints: [fp(1, 2)],
        change: { exception: { reason: 'isolated lab', expiry: '2099-12-31' } },
      },
    });
    expect(res.status, res.text).toBe(200);
    await createScopedUser(portal, MEMBER.email, MEMBER.password, [ACME]);
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  /** The cells after the name of a client's row (`row`) or a target's (`row` = `target:<name>`). */
  const counts = (page: Page, table: string, row: string) =>
    page
      .locator(
        `[role="group"][aria-label="${table}"] tr[${row.startsWith('target:') ? `data-target="${row.slice(7)}"` : `data-client="${row}"`}] td`,
      )
      .allTextContents();
  const portfolioCount = (page: Page) => page.locator('[data-portfolio-count]').textContent();
  async function checkPage(p: ConsolePage) {
    expect(await noSidewaysScroll(p.page)).toBe(true);
    await expectAccessible(p.page);
    expectNoConsoleErrors(p);
  }
  /** Follows a count's link and answers the portfolio's count line and address. */
  async function follow(page: Page, name: string | RegExp) {
    await page.getByRole('link', { name }).click();
    await page.waitForURL(/\/console\/findings\?/);
    // Settled: the count is in and nothing is loading any more.
    await poll(() => portfolioCount(page)).toMatch(/^\d[\d,]* findings? match/);
    return { count: await portfolioCount(page), url: new URL(page.url()) };
  }

  it('as admin: counts per client and target, each a link to the portfolio page with that many findings', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, '/console/overview');
      const clients = 'Clients, most open criticals first';
      await poll(() => counts(page, clients, ACME)).toEqual(['4', '4', '8', '2', expect.stringMatching(/ago$/), '0']);
      expect(await counts(page, clients, BETA)).toEqual(['2', '2', '4', '1', expect.stringMatching(/ago$/), '0']);
      // Worst first: acme before beta.
      expect(
        await page
          .locator(`[role="group"][aria-label="${clients}"] tbody tr`)
          .evaluateAll((r) => r.map((x) => x.getAttribute('data-client'))),
      ).toEqual([ACME, BETA]);

      await page.locator(`details[data-client="${ACME}"] summary`).click();
      const targets = `Targets of ${ACME}, most open criticals first`;
      const net = await counts(page, targets, 'target:acme-net');
      const dmz = await counts(page, targets, 'target:acme-dmz');
      expect(net.slice(0, 4)).toEqual(['2', '3', '5', '1']);
      expect(dmz.slice(0, 4)).toEqual(['2', '1', '3', '1']);
      // Each target's trend is its own: acme-dmz's two scans, acme-net's one.
      expect(dmz[5]).toMatch(/since the scan before$/);
      expect(net[5]).toMatch(/first scored scan$/);
      await checkPage(p);
      await screenshot(page, 'overview-posture.png', { fullPage: true });

      // The client's criticals: the portfolio page with exactly that filter lists 4.
      const crit = await follow(page, `4 open critical findings in ${ACME}`);
      expect(crit.count).toMatch(/^4 findings match/);
      expect(Object.fromEntries(crit.url.searchParams)).toEqual({
        client_id: ACME,
        severity: 'critical',
        status: 'open',
        exception: 'none,expired',
        disposition: 'none',
      });
      await page.goBack();
      await page.locator(`details[data-client="${ACME}"] summary`).click();
      const overdue = await follow(page, `5 overdue findings in acme-net (${ACME})`);
      expect(overdue.count).toMatch(/^5 findings match · 5 open · 5 overdue/);
      expect(Object.fromEntries(overdue.url.searchParams)).toEqual({
        client_id: ACME,
        target: 'acme-net',
        overdue: 'true',
      });
      await page.goBack();
      const kev = await follow(page, `1 open finding on the KEV list in ${BETA}`);
      expect(kev.count).toMatch(/^1 finding match/);

      // By keyboard: open beta's targets with Enter, Tab past the table's scroll region to its first number, Enter.
      await page.goBack();
      const summary = page.locator(`details[data-client="${BETA}"] summary`);
      await summary.focus();
      await page.keyboard.press('Enter');
      await poll(() => page.locator(`details[data-client="${BETA}"]`).getAttribute('open')).toBe('');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await poll(() => page.evaluate("document.activeElement.getAttribute('aria-label')")).toBe(
        `2 open critical findings in beta-net (${BETA})`,
      );
      await page.keyboard.press('Enter');
      await page.waitForURL(/\/console\/findings\?/);
      await poll(() => portfolioCount(page)).toMatch(/^2 findings match/);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it.each([
    ['admin', 'phone'],
    ['customer user', 'phone'],
    ['customer user', 'desktop'],
  ] as const)('as %s on a %s: readable without sideways scrolling, axe clean', async (who, width) => {
    const p = await openPage(browser, WIDTHS[width]);
    const { page } = p;
    try {
      await signIn(page, portal, who === 'admin' ? undefined : MEMBER, '/console/overview');
      await poll(() => page.locator('tr[data-client]').count()).toBe(who === 'admin' ? 2 : 1);
      if (who === 'customer user') {
        expect(await page.locator(`tr[data-client="${BETA}"]`).count()).toBe(0);
        // No fleet for a business client's user: no stale agents column.
        expect(await page.getByRole('columnheader', { name: 'Stale agents' }).count()).toBe(0);
      }
      await page.locator(`details[data-client="${ACME}"] summary`).click();
      await poll(() => page.locator(`tr[data-target="acme-dmz"]`).isVisible()).toBe(true);
      await checkPage(p);
      if (who === 'customer user' && width === 'phone') {
        await screenshot(page, 'overview-posture-phone.png', { fullPage: true });
        const kev = await follow(page, `1 open finding on the KEV list in acme-net (${ACME})`);
        expect(kev.count).toMatch(/^1 finding match/);
        expect(Object.fromEntries(kev.url.searchParams)).toMatchObject({
          client_id: ACME,
          target: 'acme-net',
          kev: 'true',
        });
        expectNoConsoleErrors(p);
      }
    } finally {
      await p.close();
    }
  });
});
