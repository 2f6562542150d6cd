import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { createScopedUser, signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { firstDrawnLabel, noSidewaysScroll } from './helpers/console-ui.ts';
import { largeSessionDoc, uploadDoc } from '@svc/test-support/large-session';

/**
 * Working through a session's findings in a real browser against a real portal: filter,
 * sort, search, the detail panel, a note, a bulk status change and a bulk exception (one
 * POST /api/findings/bulk each), each checked in what the portal stored; at a desktop and a phone width, as an admin and as a
 * user scoped to the session's client; axe-clean with the panel and the bulk bar open.
 */

const CLIENT = 'findings-co';
const FINDINGS = 70;
const USER = { email: 'analyst@findings-co.test', password: 'analyst-password-0123' };

type Doc = ReturnType<typeof largeSessionDoc>;
type StoredEntry = {
  fingerprint: string;
  status: string;
  note: string;
  exception_status: string | null;
  exception_reason?: string;
};

describe('findings table in the session view', () => {
  let portal: TestPortal;
  let browser: Browser;
  let admin: string;
  let key: string;

  beforeAll(async () => {
    portal = await startConsolePortal();
    admin = await portal.adminToken();
    key = (await createLicense(portal, { tier: 'business', client_id: CLIENT })).key;
    await createScopedUser(portal, USER.email, USER.password, [CLIENT]);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  const stored = async (sessionId: string) =>
    (
      await http(portal.url, 'GET', `/api/download?session=${sessionId}&client_id=${CLIENT}`, {
        headers: withToken(admin),
      })
    ).body as { remediation: StoredEntry[] };

  const rows = (page: Page) => page.locator('section[aria-labelledby="findings-h"] tbody tr[data-finding]');
  const count = (page: Page) => page.locator('.findings-count').textContent();
  const status = (page: Page) => page.getByRole('status').first().textContent();
  const name = (f: Doc['findings'][number]) => `${f.title} on ${f.host}:${f.port}/${f.protocol}`;

  const cases = [
    { who: 'admin', width: 'desktop' },
    { who: 'admin', width: 'phone' },
    { who: 'scoped user', width: 'desktop' },
    { who: 'scoped user', width: 'phone' },
  ] as const;

  for (const c of cases) {
    it(`filters, sorts, opens the detail, writes a note and changes selected findings (${c.who}, ${c.width})`, async () => {
      const sessionId = `20250601_1200_${c.who === 'admin' ? 'a' : 'u'}_${c.width}`;
      const doc = largeSessionDoc(sessionId, CLIENT, FINDINGS);
      // A target of its own: findings of record (and their history) are kept per client and target.
      doc.metadata.target = `10.0.0.0/16 ${c.who} ${c.width}`;
      await uploadDoc(portal.url, key, doc);
      const p = await openPage(browser, WIDTHS[c.width]);
      const { page } = p;
      try {
        await signIn(
          page,
          portal,
          c.who === 'admin' ? undefined : USER,
          `/collect/?session=${sessionId}&client_id=${CLIENT}`,
        );
        await rows(page).first().waitFor();
        await expect.poll(() => count(page)).toBe(`${FINDINGS} findings, page 1 of 3`);
        if (c.width === 'phone') {
          // Stacked rows led by the severity, nothing scrolled sideways.
          expect(await firstDrawnLabel(rows(page).first())).toBe('Severity');
          expect(await noSidewaysScroll(page)).toBe(true);
        }

        // Filter by severity: exactly the criticals of the file.
        const criticals = doc.findings.filter((f) => f.severity === 'critical');
        await page.getByLabel('Severity', { exact: true }).selectOption('critical');
        await expect.poll(() => count(page)).toBe(`${criticals.length} findings`);
        const severities = await rows(page).locator('td:nth-child(2)').allTextContents();
        expect(new Set(severities)).toEqual(new Set(['critical']));

        // Sort by port ascending within the filter: Telnet (23) before SMBv1 (445).
        await page.getByRole('button', { name: 'Port', exact: true }).click();
        await expect.poll(() => page.locator('th[aria-sort="ascending"]').textContent()).toBe('Port▲');
        await expect
          .poll(() => rows(page).locator('td:nth-child(3) strong').allTextContents())
          .toEqual([
            ...criticals.filter((f) => f.port === 23).map((f) => f.title),
            ...criticals.filter((f) => f.port === 445).map((f) => f.title),
          ]);

        // Search by host name: the findings of one host.
        await page.getByRole('button', { name: 'Clear', exact: true }).click();
        const onHost = doc.findings.filter((f) => f.hostname === 'host-0003.acme.test');
        await page.getByLabel('Search findings').fill('HOST-0003');
        await page.getByLabel('Search findings').press('Enter');
        await expect.poll(() => count(page)).toBe(`${onHost.length} findings`);

        // The detail panel: evidence, references, history; then a note.
        const target = onHost[0]!;
        await page.getByRole('button', { name: `Details of ${name(target)}` }).click();
        const panel = page.locator('aside.finding-detail');
        await expect.poll(() => panel.locator('pre.finding-evidence').textContent()).toBe(target.evidence);
        for (const ref of [...target.references.cve, ...target.references.urls])
          expect(await panel.getByRole('link', { name: ref }).count()).toBe(1);
        expect(await panel.locator('.finding-history, p.muted').filter({ hasText: 'No changes' }).count()).toBe(1);
        await expectAccessible(page);
        await panel.getByLabel(`Note for ${name(target)}`).fill('patch window on Friday');
        await panel.getByRole('button', { name: 'Save note' }).click();
        await expect
          .poll(() => status(page))
          .toBe(`Note saved for “${target.title}” on ${target.host}:${target.port}/${target.protocol}.`);
        const byFp = async (fp: string) => (await stored(sessionId)).remediation.find((e) => e.fingerprint === fp)!;
        expect((await byFp(target.fingerprint)).note).toBe('patch window on Friday');
        await expect.poll(() => panel.locator('ol.finding-history li').count()).toBe(1);
        await panel.getByRole('button', { name: 'Close details' }).click();

        // Bulk status change: two findings of the host, in one request.
        const bulk: string[] = [];
        page.on('request', (r) => {
          if (r.method() === 'POST' && r.url().includes('/api/findings/bulk')) bulk.push(r.postData() ?? '');
        });
        const [a, b] = onHost;
        await page.getByLabel(`Select ${name(a!)}`).check();
        await page.getByLabel(`Select ${name(b!)}`).check();
        await page.getByLabel('Status for selected').selectOption('deferred');
        await expectAccessible(page);
        await page.getByRole('button', { name: 'Apply status' }).click();
        await expect
          .poll(() => status(page))
          .toBe('Status set to deferred for 2 selected findings: 2 matched, 2 changed.');
        expect(bulk.map((b) => JSON.parse(b).fingerprints)).toEqual([[a!.fingerprint, b!.fingerprint]]);
        expect((await byFp(a!.fingerprint)).status).toBe('deferred');
        expect((await byFp(b!.fingerprint)).status).toBe('deferred');
        const untouched = onHost[2]!;
        expect((await byFp(untouched.fingerprint)).status).toBe(
          doc.remediation[doc.findings.indexOf(untouched)]!.status,
        );
        await expect.poll(() => page.getByLabel(`Remediation status of ${name(a!)}`).inputValue()).toBe('deferred');

        // Bulk exception for the same two.
        await page.getByLabel(`Select ${name(a!)}`).check();
        await page.getByLabel(`Select ${name(b!)}`).check();
        await page.getByRole('button', { name: 'Exception for selected…' }).click();
        const expiry = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
        await page.getByLabel('Exception reason for selected findings').fill('segmented network');
        await page.getByLabel('Exception expiry for selected findings').fill(expiry);
        await page.getByRole('button', { name: 'Accept exception for selected' }).click();
        await expect
          .poll(() => status(page))
          .toBe(`Exception accepted until ${expiry} for 2 selected findings: 2 matched, 2 changed.`);
        expect(bulk).toHaveLength(2);
        for (const f of [a!, b!]) {
          const e = await byFp(f.fingerprint);
          expect([e.exception_status, e.exception_reason]).toEqual(['accepted', 'segmented network']);
        }
        expect((await byFp(untouched.fingerprint)).exception_status).toBeNull();

        // The exception filter now finds exactly those two.
        await page.getByRole('button', { name: 'Clear', exact: true }).click();
        await page.getByLabel('Exception', { exact: true }).selectOption('active');
        await expect.poll(() => count(page)).toBe('2 findings');
        await expectAccessible(page);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });
  }

  it('keeps a search typed right after Clear, even when a frame passes before Enter', async () => {
    const sessionId = '20250601_1200_clear_type';
    const doc = largeSessionDoc(sessionId, CLIENT, FINDINGS);
    doc.metadata.target = '10.0.0.0/16 clear then type';
    await uploadDoc(portal.url, key, doc);
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      // The page's clock, so a frame comes exactly between typing and Enter.
      await page.clock.install();
      await signIn(page, portal, undefined, `/collect/?session=${sessionId}&client_id=${CLIENT}`);
      await expect.poll(() => count(page)).toBe(`${FINDINGS} findings, page 1 of 3`);
      await page.getByLabel('Severity', { exact: true }).selectOption('critical');
      await expect.poll(() => count(page)).not.toBe(`${FINDINGS} findings, page 1 of 3`);
      await page.clock.pauseAt(Date.now() + 60_000);

      await page.getByRole('button', { name: 'Clear', exact: true }).click();
      await page.getByLabel('Search findings').fill('HOST-0003');
      await page.clock.runFor(1_000);
      expect(await page.getByLabel('Search findings').inputValue()).toBe('HOST-0003');
      await page.clock.resume();
      await page.getByLabel('Search findings').press('Enter');
      const onHost = doc.findings.filter((f) => f.hostname === 'host-0003.acme.test');
      await expect.poll(() => count(page)).toBe(`${onHost.length} findings`);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
