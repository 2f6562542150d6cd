import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingFingerprint } from '@svc/protocol/node';
import { createLicense } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { leanSessionDoc, uploadDoc } from '@svc/test-support/large-session';
import { type ConsolePage, expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { createScopedUser, signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { noSidewaysScroll, poll } from './helpers/console-ui.ts';
import { screenshot } from '@svc/test-support/screenshots';

/**
 * The findings across the portfolio (/console/findings) in a real browser against a real
 * portal: two clients, three targets, 70 findings of record scanned in January 2025 (so every
 * one is overdue). As admin: filters in the address, "select all 50 matching" over two pages
 * set in one POST /api/findings/bulk by filter; the address round-trips filters, page size and
 * position. As a customer user of one client: only its findings, and a note for all its
 * matching findings in one request that leaves the other client's untouched. The order, chosen
 * by its label (by keyboard), lives in the address and the next page follows it; a customer
 * user opens a bookmarked order (hosts A to Z). Past 10,000 matches the count says "more than"
 * and counts them all only when asked. Chosen rows of
 * several clients and targets: one request per client and target. The tests run in order on
 * one portal, each starting from what the one before left.
 */

const ACME = 'acme-portfolio';
const BETA = 'beta-portfolio';
const GAMMA = 'gamma-portfolio';
const MEMBER = { email: 'member@acme-portfolio.test', password: 'Member-portfolio-pass-1' };

/** `n` findings on 10.<net>.0.<i>, critical or high by `severity(i)`, scanned on `day`. */
function scanDoc(
  clientId: string,
  sessionId: string,
  target: string,
  net: number,
  n: number,
  high: (i: number) => boolean,
) {
  const at = `2025-01-${sessionId.slice(6, 8)}T12:00:00.000Z`;
  const findings = Array.from({ length: n }, (_, i) => ({
    id: `f-${i}`,
    rule_id: `svc.rule.${i % 5}`,
    title: `Weakness ${i % 5}`,
    severity: high(i) ? 'high' : 'critical',
    host: `10.${net}.0.${i + 1}`,
    port: 443,
    protocol: 'tcp',
    fingerprint: findingFingerprint({
      rule_id: `svc.rule.${i % 5}`,
      host: `10.${net}.0.${i + 1}`,
      port: 443,
      protocol: 'tcp',
    }),
    ...(i === 0 ? { kev: true, epss: 0.93, references: { cve: ['CVE-2024-3400'] } } : {}),
  }));
  return {
    metadata: { session_id: sessionId, client_id: clientId, client: clientId, target, started_at: at, finished_at: at },
    summary: { risk_score: 80, risk_grade: 'F', total_findings: n, total_hosts: n },
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

describe('findings across the portfolio', () => {
  let portal: TestPortal;
  let browser: Browser;
  let admin: string;

  beforeAll(async () => {
    portal = await startConsolePortal();
    admin = await portal.adminToken();
    browser = await launchChromium();
    const acme = (await createLicense(portal, { tier: 'business', client_id: ACME })).key;
    const beta = (await createLicense(portal, { tier: 'business', client_id: BETA })).key;
    // acme: 40 on acme-net (20 critical, 20 high) and 10 critical on acme-dmz; beta: 20 critical.
    await uploadDoc(
      portal.url,
      acme,
      scanDoc(ACME, '20250110_120000', 'acme-net', 1, 40, (i) => i % 2 === 1),
    );
    await uploadDoc(
      portal.url,
      acme,
      scanDoc(ACME, '20250111_120000', 'acme-dmz', 2, 10, () => false),
    );
    await uploadDoc(
      portal.url,
      beta,
      scanDoc(BETA, '20250112_120000', 'beta-net', 3, 20, () => false),
    );
    await createScopedUser(portal, MEMBER.email, MEMBER.password, [ACME]);
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  const records = async (query: string) => {
    const res = await http(portal.url, 'GET', `/api/findings?limit=500&${query}`, { headers: withToken(admin) });
    expect(res.status).toBe(200);
    return res.body.findings as { client_id: string; severity: string; status: string; note: string }[];
  };
  const count = (page: Page) => page.locator('[data-portfolio-count]').textContent();
  const rows = (page: Page) => page.locator('tbody tr[data-finding]');
  const bulkPosts = (page: Page) => {
    const bodies: unknown[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/api/findings/bulk'))
        bodies.push(JSON.parse(r.postData() ?? 'null'));
    });
    return bodies;
  };
  async function checkPage(p: ConsolePage, allow: number[] = []) {
    expect(await noSidewaysScroll(p.page)).toBe(true);
    await expectAccessible(p.page);
    expectNoConsoleErrors(p, allow);
  }

  it('as admin: filters in the address, "select all matching" over two pages in one request', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const posts = bulkPosts(page);
    try {
      await signIn(page, portal, undefined, '/console/findings');
      await poll(() => count(page)).toBe('70 findings match · 70 open · 70 overdue · showing 1–25');
      expect(await rows(page).count()).toBe(25);
      await checkPage(p);

      // Severity critical, applied: the address holds the API's filter.
      await page.getByRole('checkbox', { name: 'critical' }).check();
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await poll(() => count(page)).toBe('50 findings match · 50 open · 50 overdue · showing 1–25');
      expect(new URL(page.url()).search).toBe('?severity=critical');

      // People's statuses only in the bulk control; the filter keeps the scanner's apart.
      // By keyboard: Space on the page's box, then Tab to "Select all 50 … matching" and Enter.
      await page.getByRole('checkbox', { name: 'Select all on this page' }).focus();
      await page.keyboard.press('Space');
      await poll(() => page.locator('[data-bulk-count]').textContent()).toBe('25 findings');
      await page.keyboard.press('Tab');
      await poll(() => page.evaluate('document.activeElement.textContent')).toBe('Select all 50 findings matching');
      await page.keyboard.press('Enter');
      await poll(() => page.locator('[data-bulk-count]').textContent()).toBe('50 findings');
      const bulk = page.locator('fieldset.portfolio-bulk');
      expect(await bulk.getByLabel('Status').locator('option').allTextContents()).toEqual(['in progress', 'deferred']);
      expect(
        await page.locator('#portfolio-status optgroup').evaluateAll((g) => g.map((x) => x.getAttribute('label'))),
      ).toEqual(['Set by people', 'Set by the scanner']);
      await checkPage(p);

      await screenshot(page, 'portfolio.png');
      await bulk.getByLabel('Status').selectOption('deferred');
      await bulk.getByRole('button', { name: 'Apply status' }).click();
      await poll(() => page.locator('p.alert-ok').textContent()).toBe('Status set to deferred: 50 findings changed.');
      // One request by filter reached both pages and both clients.
      expect(posts).toEqual([{ filter: { severity: 'critical' }, change: { status: 'deferred' } }]);
      const all = await records('');
      expect(all.filter((f) => f.severity === 'critical').map((f) => f.status)).toEqual(Array(50).fill('deferred'));
      expect(all.filter((f) => f.severity === 'high').map((f) => f.status)).toEqual(Array(20).fill('new'));
      await poll(() => rows(page).first().locator('[class*="status-"]').textContent()).toBe('deferred');
      expect(await rows(page).first().textContent()).toContain('set by');
      await checkPage(p);
    } finally {
      await p.close();
    }
  });

  it.each([
    ['admin', 'phone'],
    ['customer user', 'desktop'],
  ] as const)('as %s on a %s: readable without sideways scrolling, axe clean', async (who, width) => {
    const p = await openPage(browser, WIDTHS[width]);
    try {
      await signIn(p.page, portal, who === 'admin' ? undefined : MEMBER, '/console/findings?per_page=50');
      await poll(() => count(p.page)).toMatch(who === 'admin' ? /^70 findings match/ : /^50 findings match/);
      expect(await rows(p.page).count()).toBe(50);
      await p.page.getByRole('checkbox', { name: 'Select all on this page' }).check();
      await poll(() => p.page.locator('[data-bulk-count]').textContent()).toBe('50 findings');
      await checkPage(p);
    } finally {
      await p.close();
    }
  });

  it('says it is loading until the breakdown is in, also between the count and the breakdown', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    // Every text the count line shows, as the page commits it (a render between two requests included).
    await page.addInitScript(`
      const seen = (globalThis.countTexts = []);
      new MutationObserver(() => {
        const text = document.querySelector('[data-portfolio-count]')?.textContent ?? null;
        if (text !== null && text !== seen.at(-1)) seen.push(text);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    `);
    // The breakdown is held until the count is on the page.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/findings/summary?*', async (route) => {
      await held;
      await route.continue();
    });
    try {
      await signIn(page, portal, undefined, `/console/findings?client_id=${BETA}`);
      await poll(() => count(page)).toBe('Loading… 20 findings match · showing 1–20');
      release();
      await poll(() => count(page)).toBe('20 findings match · 20 open · 20 overdue · showing 1–20');
      const texts = await page.evaluate(() => (globalThis as unknown as { countTexts: string[] }).countTexts);
      // Only the last text is without "Loading…": nothing looked settled before the breakdown came.
      expect(texts.at(-1)).toBe('20 findings match · 20 open · 20 overdue · showing 1–20');
      expect(texts.slice(0, -1).filter((t) => !t.startsWith('Loading…'))).toEqual([]);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('round-trips filters, page size and position through the address', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      const link = `/console/findings?client_id=${ACME}&severity=critical%2Chigh&status=open&overdue=true&per_page=50`;
      await signIn(page, portal, undefined, link);
      await poll(() => count(page)).toBe('50 findings match · 50 open · 50 overdue · showing 1–50');
      expect(await page.getByLabel('Client').inputValue()).toBe(ACME);
      expect(await page.getByRole('checkbox', { name: 'critical' }).isChecked()).toBe(true);
      expect(await page.getByRole('checkbox', { name: 'high' }).isChecked()).toBe(true);
      expect(await page.getByRole('checkbox', { name: 'medium' }).isChecked()).toBe(false);
      expect(await page.getByLabel('Status', { exact: true }).inputValue()).toBe('open');
      expect(await page.getByLabel('Overdue').inputValue()).toBe('true');
      expect(await page.getByLabel('Rows per page').inputValue()).toBe('50');

      // 25 a page: the second page's address opens that page again after a reload.
      await page.getByLabel('Rows per page').selectOption('25');
      await poll(() => count(page)).toBe('50 findings match · 50 open · 50 overdue · showing 1–25');
      await page.getByRole('button', { name: 'Next' }).click();
      await poll(() => count(page)).toBe('50 findings match · 50 open · 50 overdue · showing 26–50');
      const second = await rows(page).evaluateAll((r) => r.map((x) => x.getAttribute('data-finding')));
      const url = new URL(page.url());
      expect(url.searchParams.get('page')).toBe('2');
      expect(url.searchParams.get('severity')).toBe('critical,high');
      await page.reload();
      await poll(() => count(page)).toBe('50 findings match · 50 open · 50 overdue · showing 26–50');
      expect(await rows(page).evaluateAll((r) => r.map((x) => x.getAttribute('data-finding')))).toEqual(second);

      // EPSS and KEV: the one exploited finding of acme.
      await page.getByLabel('EPSS at least').fill('0.5');
      await page.getByLabel('Known exploited (KEV)').selectOption('true');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await poll(() => count(page)).toBe('2 findings match · 2 open · 2 overdue · showing 1–2');
      expect(new URL(page.url()).searchParams.get('epss_min')).toBe('0.5');
      await checkPage(p);
    } finally {
      await p.close();
    }
  });

  it('as admin: the order is chosen by its label, kept in the address and followed by the next page', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, '/console/findings');
      await poll(() => count(page)).toBe('70 findings match · 70 open · 70 overdue · showing 1–25');
      const order = page.getByLabel('Order');
      expect(await order.locator('option').allTextContents()).toEqual([
        'Severity: highest first',
        'First seen: newest first',
        'First seen: oldest first',
        'Due date: soonest first',
        'EPSS: highest first',
        'Host: A to Z',
      ]);
      // By keyboard: focus the control and pick the next order down.
      await order.focus();
      await page.keyboard.press('ArrowDown');
      await poll(() => new URL(page.url()).searchParams.get('sort')).toBe('first_seen_desc');
      // Newest first: beta's 20 (scanned 12 January), then acme-dmz (11 January).
      await poll(() => rows(page).evaluateAll((r) => r.map((x) => x.getAttribute('data-client')))).toEqual([
        ...Array(20).fill(BETA),
        ...Array(5).fill(ACME),
      ]);
      // The count does not depend on the order.
      expect(await count(page)).toBe('70 findings match · 70 open · 70 overdue · showing 1–25');
      const first = await rows(page).evaluateAll((r) => r.map((x) => x.getAttribute('data-finding')));
      await page.getByRole('button', { name: 'Next' }).click();
      await poll(() => count(page)).toBe('70 findings match · 70 open · 70 overdue · showing 26–50');
      const second = await rows(page).evaluateAll((r) => r.map((x) => x.getAttribute('data-finding')));
      expect(new URL(page.url()).searchParams.get('sort')).toBe('first_seen_desc');
      const api = await records('sort=first_seen_desc');
      expect([...first, ...second]).toEqual(
        api.slice(0, 50).map((f) => (f as unknown as { fingerprint: string }).fingerprint),
      );
      // Another order starts again at its first page.
      await order.selectOption({ label: 'EPSS: highest first' });
      await poll(() => count(page)).toBe('70 findings match · 70 open · 70 overdue · showing 1–25');
      expect(new URL(page.url()).searchParams.get('cursor')).toBeNull();
      await poll(() => rows(page).locator('td[data-label="Finding"]').first().textContent()).toContain('EPSS 93.0 %');
      await checkPage(p);
    } finally {
      await p.close();
    }
  });

  it('as a customer user on a phone: hosts A to Z from a bookmarked address, within their client', async () => {
    const p = await openPage(browser, WIDTHS.phone);
    const { page } = p;
    try {
      await signIn(page, portal, MEMBER, '/console/findings?sort=host_asc&per_page=50');
      await poll(() => count(page)).toBe('50 findings match · 50 open · 50 overdue · showing 1–50');
      expect(await page.getByLabel('Order').inputValue()).toBe('host_asc');
      const hosts = await rows(page).locator('td.portfolio-where').allTextContents();
      // Byte order, as the portal sorts: 10.1.0.1, 10.1.0.10, 10.1.0.11 … before 10.1.0.2.
      expect(hosts.slice(0, 3)).toEqual(['10.1.0.1:443/tcp', '10.1.0.10:443/tcp', '10.1.0.11:443/tcp']);
      const names = hosts.map((h) => h.replace(/:443\/tcp$/, ''));
      expect(names).toEqual([...names].sort());
      expect(await page.locator(`tbody tr[data-client="${BETA}"]`).count()).toBe(0);
      await checkPage(p);
    } finally {
      await p.close();
    }
  });

  it('as a customer user on a phone: only their client, and a note for all matching in one request', async () => {
    const p = await openPage(browser, WIDTHS.phone);
    const { page } = p;
    const posts = bulkPosts(page);
    try {
      await signIn(page, portal, MEMBER, '/console/findings');
      await poll(() => count(page)).toBe('50 findings match · 50 open · 50 overdue · showing 1–25');
      expect(await page.locator(`tbody tr[data-client="${BETA}"]`).count()).toBe(0);
      expect(await page.getByLabel('Client').locator('option').allTextContents()).toEqual(['All', ACME]);
      await checkPage(p);

      await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
      await page.getByRole('button', { name: 'Select all 50 findings matching' }).click();
      const bulk = page.locator('fieldset.portfolio-bulk');
      await bulk.getByRole('button', { name: 'Note…' }).click();
      await bulk.getByLabel(/Note \(replaces/).fill('Patch window 14 March');
      await bulk.getByRole('button', { name: 'Save note' }).click();
      await poll(() => page.locator('p.alert-ok').textContent()).toBe('Note saved: 50 findings changed.');
      expect(posts).toEqual([{ filter: {}, change: { note: 'Patch window 14 March' } }]);
      const acme = await records(`client_id=${ACME}`);
      const beta = await records(`client_id=${BETA}`);
      expect(acme.map((f) => f.note)).toEqual(Array(50).fill('Patch window 14 March'));
      expect(beta.map((f) => f.note)).toEqual(Array(20).fill(''));
      await poll(() => rows(page).first().locator('[data-note]').textContent()).toBe('Note: Patch window 14 March');
      await checkPage(p);
      await screenshot(page, 'portfolio-phone.png', { fullPage: true });

      // Another client by address: the portal's 403, said plainly.
      await page.goto(`${portal.url}/console/findings?client_id=${BETA}`);
      await poll(() => page.locator('p.alert-error').first().textContent()).toBe(
        'Access to this client is not allowed',
      );
      expect(await rows(page).count()).toBe(0);
      expectNoConsoleErrors(p, [403]);
    } finally {
      await p.close();
    }
  });

  it('chosen rows of several clients and targets: one request per client and target, the exception shown in each row', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const posts = bulkPosts(page);
    try {
      await signIn(page, portal, undefined, '/console/findings?kev=true');
      await poll(() => count(page)).toBe('3 findings match · 3 open · 3 overdue · showing 1–3');
      await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
      // All of them are on the page: nothing more to offer.
      expect(await page.getByRole('button', { name: /^Select all \d+ findings matching$/ }).count()).toBe(0);
      const bulk = page.locator('fieldset.portfolio-bulk');
      await bulk.getByRole('button', { name: 'Exception…' }).click();
      await bulk.getByLabel('Exception reason for the chosen findings').fill('Compensating control: WAF rule 12');
      await bulk.getByLabel('Exception expiry for the chosen findings').fill('2099-12-31');
      await bulk.getByRole('button', { name: 'Accept exception' }).click();
      await poll(() => page.locator('p.alert-ok').textContent()).toBe(
        'Exception accepted until 2099-12-31: 3 findings changed.',
      );
      const sent = posts as { client_id: string; target: string; fingerprints: string[] }[];
      expect(sent.map((b) => `${b.client_id} ${b.target} ${b.fingerprints.length}`).sort()).toEqual([
        `${ACME} acme-dmz 1`,
        `${ACME} acme-net 1`,
        `${BETA} beta-net 1`,
      ]);
      // The exception leads each row's triage (acme's rows keep the member's note after it).
      await poll(async () =>
        (await rows(page).locator('td[data-label="Triage"] > div:first-child').allTextContents()).sort(),
      ).toEqual(Array(3).fill('Exception accepted until 2099-12-31'));
      // An accepted exception stops the clock: none of them is overdue now.
      await poll(() => count(page)).toBe('3 findings match · 3 open · 0 overdue · showing 1–3');
      await checkPage(p);
    } finally {
      await p.close();
    }
  });

  // Last: it adds a third client's 10,001 findings to what the admin sees.
  describe('over 10,000 matches', () => {
    // Its own set-up, bounded by the hook timeout: storing 10,001 findings is no part of what the test watches.
    beforeAll(async () => {
      const gamma = (await createLicense(portal, { tier: 'business', client_id: GAMMA })).key;
      await uploadDoc(portal.url, gamma, leanSessionDoc('20250113_120000', GAMMA, 10_001));
    });

    it('as admin over 10,000 matches: the count says "more than", the breakdown on request', async () => {
      const p = await openPage(browser, WIDTHS.desktop);
      const { page } = p;
      const summaries: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/api/findings/summary')) summaries.push(r.url());
      });
      try {
        await signIn(page, portal, undefined, '/console/findings');
        await poll(() => count(page)).toBe('More than 10,000 findings match · showing 1–25');
        // Nothing counted every match yet: only the capped count went out.
        expect(summaries).toEqual([]);
        await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
        await poll(() => page.locator('.bulk-tools p.muted').textContent()).toBe(
          'More than 10,000 match: narrow the filters to 10,000 or fewer to change them all at once.',
        );
        await checkPage(p);
        await page.getByRole('button', { name: 'Count them all' }).click();
        await poll(() => count(page)).toMatch(/^10,071 findings match · 10,071 open · [\d,]+ overdue · showing 1–25$/);
        expect(summaries).toHaveLength(1);
        expect(await page.getByRole('button', { name: 'Count them all' }).count()).toBe(0);
        await checkPage(p);
      } finally {
        await p.close();
      }
    });
  });
});
