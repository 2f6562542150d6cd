import fs from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { login } from '@svc/test-support/portal';
import { launchChromium } from '@svc/test-support/chromium';
import { expectAccessible, expectNoConsoleErrors, openPage, untilSettled, WIDTHS } from './helpers/browser.ts';
import { createScopedUser, signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { type Seeded, seedSessions } from './helpers/seed.ts';
import { screenshot } from '@svc/test-support/screenshots';
import { formatScore } from '../src/ui/format.ts';

/**
 * The sessions list and the session view in a real browser against a real portal holding
 * synthetic collections of two clients: filters, paging, every block of the session view,
 * remediation and status changes, sharing, deletion, and a scoped user's narrower view.
 */

const SCOPED = { email: 'viewer@other.test', password: 'viewer-password-4821-x' };

describe('sessions and the session view', () => {
  let portal: TestPortal;
  let browser: Browser;
  let acme: Seeded;
  let other: Seeded;
  let admin: string;

  beforeAll(async () => {
    portal = await startConsolePortal();
    [acme, other] = [
      await seedSessions(portal, { clientId: 'acme-co', target: '10.16.0.0/24', sessions: 4, orc: true }),
      await seedSessions(portal, { clientId: 'other-co', target: '10.17.0.0/24', sessions: 2, seed: 17 }),
    ];
    await createScopedUser(portal, SCOPED.email, SCOPED.password, ['other-co']);
    admin = await portal.adminToken();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  const latestAcme = () => acme.uploads.at(-1)!.session_id;

  it.each(Object.entries(WIDTHS))('lists and filters sessions at the %s width', async (name, viewport) => {
    const p = await openPage(browser, viewport);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, '/console/sessions');
      const rows = page.locator('main tbody tr');
      await expect.poll(() => rows.count()).toBe(6);
      await expectAccessible(page);
      if (name === 'desktop') await screenshot(page, 'sessions.png', { fullPage: true });

      await page.locator('select[name="client_id"]').selectOption('acme-co');
      await page.getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => rows.count()).toBe(4);
      expect(new URL(page.url()).searchParams.get('client_id')).toBe('acme-co');

      await page.locator('select[name="client_id"]').selectOption('');
      await page.getByLabel('Search target or client').fill('10.17.0.0/24');
      await page.getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => rows.count()).toBe(2);

      // Every seeded session was uploaded today: a range that ends yesterday holds none.
      await page.getByRole('button', { name: 'Clear' }).click();
      await page.getByLabel('Uploaded to').fill('2000-01-01');
      await page.getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => page.getByText('No sessions match.').isVisible()).toBe(true);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('pages through the list with Next and Previous', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, '/console/sessions');
      const rows = page.locator('main tbody tr');
      await expect.poll(() => rows.count()).toBe(6);
      await page.getByLabel('Rows per page').selectOption('5');
      await expect.poll(() => rows.count()).toBe(5);
      const hrefs = () =>
        page.locator('main tbody tr a[href^="/collect/"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      const first = await hrefs();
      expect(await page.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Next' }).click();
      await expect.poll(() => rows.count()).toBe(1);
      const second = await hrefs();
      expect(new Set([...first, ...second]).size).toBe(6);
      expect(await page.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Previous' }).click();
      await expect.poll(hrefs).toEqual(first);
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it.each(Object.entries(WIDTHS))('shows every block of the session view at the %s width', async (name, viewport) => {
    const p = await openPage(browser, viewport);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, '/console/sessions');
      await page.locator(`a[href="/collect/?session=${latestAcme()}&client_id=acme-co"]`).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Session ${latestAcme()}`);
      expect(new URL(page.url()).pathname).toBe('/collect/');
      const doc = acme.docs.at(-1)!;
      for (const h of ['Summary', 'Findings', 'Risk exceptions', 'Compliance', 'ORC 9.64 readiness', 'Topology']) {
        await expect.poll(() => page.getByRole('heading', { name: h, exact: true }).isVisible()).toBe(true);
      }
      for (const h of ['Risk trend for this target', 'Benchmark', 'Report', 'Files and sharing', 'Review status']) {
        await expect.poll(() => page.getByRole('heading', { name: h, exact: true }).isVisible()).toBe(true);
      }
      // The scores of the current triage, as the portal states them (docs/findings-of-record.md#one-set-of-numbers).
      const summary = page.locator('section[aria-labelledby="summary-h"]');
      const view = (
        await http(portal.url, 'GET', `/api/sessions?session=${latestAcme()}&client_id=acme-co`, {
          headers: withToken(admin),
        })
      ).body.session as {
        risk_score: number;
        exception_summary: { risk_score_operational: number };
        disposition_summary?: { false_positive: number };
      };
      await expect.poll(() => summary.textContent()).toContain(`${formatScore(view.risk_score)} / 100`);
      await expect
        .poll(() => summary.textContent())
        .toContain(`${formatScore(view.exception_summary.risk_score_operational)} / 100`);
      expect(await summary.locator('[data-false-positives]').textContent()).toBe(
        String(view.disposition_summary?.false_positive ?? 0),
      );
      // Findings: the first page of 25, most severe first; with the findings of record this scan
      // resolved or did not check (docs/findings-of-record.md), as many as the portal lists.
      const findings = page.locator('section[aria-labelledby="findings-h"] tbody tr');
      const listed = (
        await http(portal.url, 'GET', `/api/sessions/${latestAcme()}/findings?client_id=acme-co&limit=200`, {
          headers: withToken(admin),
        })
      ).body as { total: number };
      expect(listed.total).toBeGreaterThanOrEqual(doc.findings!.length);
      await expect.poll(() => findings.count()).toBe(Math.min(25, listed.total));
      expect(await findings.first().locator('td:nth-child(2) .badge').textContent()).toBe('critical');
      // Exceptions with their expiry.
      const exceptions = page.locator('section[aria-labelledby="exceptions-h"] tbody tr');
      await expect.poll(() => exceptions.count()).toBe(2);
      // Compliance per framework, topology and trend as graphics.
      expect(await page.locator('section[aria-labelledby="compliance-h"] tbody tr').count()).toBeGreaterThan(0);
      await expect.poll(() => page.locator('.topology svg rect.topo-host').count()).toBe(doc.topology!.nodes!.length);
      await expect
        .poll(() => page.locator('.trend [role="img"]').getAttribute('aria-label'))
        .toMatch(/^Risk score over 4 scans/);
      await expect.poll(() => page.locator('section[aria-labelledby="benchmark-h"] tbody tr').count()).toBe(3);
      // The report in its sandboxed frame.
      const frame = page.locator('iframe.report-frame');
      expect(await frame.getAttribute('sandbox')).toBe('allow-scripts');
      await expect
        .poll(() => page.frameLocator('iframe.report-frame').locator('body').textContent())
        .toContain(doc.metadata!.client_id!);
      expect(await page.getByLabel(/^Share link/).inputValue()).toBe(acme.uploads.at(-1)!.share_url);
      await expectAccessible(page);
      if (name === 'desktop') await screenshot(page, 'session-view.png');
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('asks which client when the session id exists under several', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const id = latestAcme();
    expect(other.uploads.map((u) => u.session_id)).toContain(id);
    try {
      await signIn(page, portal, undefined, `/collect/?session=${id}`);
      const api = await http(portal.url, 'GET', `/api/sessions?session=${id}`, { headers: withToken(admin) });
      expect(api.status).toBe(409);
      await expect.poll(() => page.locator('main [role="alert"]').textContent()).toBe(api.body.error);
      await page.getByRole('link', { name: 'acme-co' }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get('client_id')).toBe('acme-co');
      await expect.poll(() => page.getByRole('heading', { name: 'Summary' }).isVisible()).toBe(true);
      expectNoConsoleErrors(p, [409]);
    } finally {
      await p.close();
    }
  });

  it('changes a remediation status and the review status with a note', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const id = latestAcme();
    try {
      await signIn(page, portal, undefined, `/collect/?session=${id}&client_id=acme-co`);
      await untilSettled(page);
      const select = page.locator('section[aria-labelledby="findings-h"] tbody tr select').first();
      await select.waitFor();
      const title = (await page
        .locator('section[aria-labelledby="findings-h"] tbody tr strong')
        .first()
        .textContent())!;
      await select.selectOption('in_progress');
      await expect
        .poll(() => page.getByRole('status').first().textContent())
        .toContain(`“${title}” is now in progress`);
      const stored = await http(portal.url, 'GET', `/api/download?session=${id}&client_id=acme-co`, {
        headers: withToken(admin),
      });
      const entry = [...stored.body.remediation, ...(stored.body.remediation_resolved ?? [])].find(
        (e: { title: string }) => e.title === title,
      );
      expect(entry.status).toBe('in_progress');

      await page.locator('section[aria-labelledby="status-h"] select').selectOption('in_review');
      await page.getByLabel('Note').fill('Walked through with the customer');
      await page.getByRole('button', { name: 'Save status' }).click();
      const history = page.locator('ol.history');
      await expect.poll(() => history.textContent()).toContain('in review');
      await expect.poll(() => history.textContent()).toContain('Walked through with the customer');
      const detail = await http(portal.url, 'GET', `/api/sessions?session=${id}&client_id=acme-co`, {
        headers: withToken(admin),
      });
      expect(detail.body.session.status).toBe('in_review');
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it("shows the portal's 409 from the remediation update as changed by someone else", async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const id = latestAcme();
    // Another writer that always gets there first: every write of the client's findings of
    // record fails as a serialisation failure does (SQLSTATE 40001), so the portal exhausts its
    // retries and answers its own 409.
    const db = await openDb(portal);
    await db.query(`CREATE FUNCTION test_always_first() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'another writer was first' USING ERRCODE = '40001'; END $$`);
    await db.query(
      `CREATE TRIGGER test_always_first BEFORE INSERT OR UPDATE ON finding_records FOR EACH ROW
       WHEN (NEW.client_id = 'acme-co') EXECUTE FUNCTION test_always_first()`,
    );
    try {
      await signIn(page, portal, undefined, `/collect/?session=${id}&client_id=acme-co`);
      const select = page.locator('section[aria-labelledby="findings-h"] tbody tr select').first();
      await select.waitFor();
      const [answer] = await Promise.all([
        page.waitForResponse('**/api/remediation-update'),
        select.selectOption('deferred'),
      ]);
      expect(answer.status()).toBe(409);
      expect(await answer.json()).toEqual({
        error: 'Concurrent updates to this session: gave up after 3 retries, try again',
      });
      await expect
        .poll(() => page.locator('section[aria-labelledby="findings-h"] [role="alert"]').textContent())
        .toBe('This finding was changed by someone else. Reload the page to see the current status.');
      expectNoConsoleErrors(p, [409]);
    } finally {
      await db.query('DROP TRIGGER test_always_first ON finding_records');
      await db.query('DROP FUNCTION test_always_first()');
      await db.end();
      await p.close();
    }
  });

  it('downloads a stored file and copies the share link', async () => {
    const p = await openPage(browser, WIDTHS.desktop, { permissions: ['clipboard-read', 'clipboard-write'] });
    const { page } = p;
    const id = latestAcme();
    try {
      await signIn(page, portal, undefined, `/collect/?session=${id}&client_id=acme-co`);
      await untilSettled(page);
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download session_results.json' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe(`${id}_session_results.json`);
      const saved = JSON.parse(await fs.readFile((await download.path())!, 'utf8'));
      const stored = await http(portal.url, 'GET', `/api/download?session=${id}&client_id=acme-co`, {
        headers: withToken(admin),
      });
      // The served file states when its triage was read: each answer its own time.
      const asOf = { triage_as_of: expect.stringMatching(/^\d{4}-\d{2}-\d{2}/) };
      expect(saved).toEqual({ ...stored.body, metadata: { ...stored.body.metadata, ...asOf } });

      await page.getByRole('button', { name: 'Copy link' }).click();
      await expect.poll(() => page.getByText('Link copied.').isVisible()).toBe(true);
      expect(
        await page.evaluate(() =>
          (
            globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
          ).navigator.clipboard.readText(),
        ),
      ).toBe(acme.uploads.at(-1)!.share_url);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('offers a new share link when the old one was revoked, and frames the report through it', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const id = acme.uploads[0]!.session_id;
    try {
      const revoked = await http(portal.url, 'DELETE', `/api/sessions/share?session=${id}&client_id=acme-co`, {
        headers: withToken(admin),
      });
      expect(revoked.status).toBe(200);
      await signIn(page, portal, undefined, `/collect/?session=${id}&client_id=acme-co`);
      await untilSettled(page);
      const report = page.locator('section[aria-labelledby="report-h"]');
      await expect.poll(() => report.textContent()).toContain('The share link of this session is revoked');
      expect(await page.locator('iframe.report-frame').count()).toBe(0);
      await report.getByRole('button', { name: 'Create a new share link' }).click();
      await expect.poll(() => page.locator('iframe.report-frame').count()).toBe(1);
      const detail = await http(portal.url, 'GET', `/api/sessions?session=${id}&client_id=acme-co`, {
        headers: withToken(admin),
      });
      expect(await page.getByLabel(/^Share link/).inputValue()).toBe(detail.body.session.share_url);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('deletes a session only after confirmation', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const id = other.uploads[0]!.session_id;
    try {
      await signIn(page, portal, undefined, `/collect/?session=${id}&client_id=other-co`);
      await untilSettled(page);
      await page.getByRole('button', { name: 'Delete session' }).click();
      await page.getByRole('button', { name: 'Cancel' }).click();
      expect(
        (await http(portal.url, 'GET', `/api/sessions?session=${id}&client_id=other-co`, { headers: withToken(admin) }))
          .status,
      ).toBe(200);
      await page.getByRole('button', { name: 'Delete session' }).click();
      expect(await page.getByRole('alertdialog').textContent()).toContain('This cannot be undone.');
      await page.getByRole('button', { name: 'Delete for good' }).click();
      await expect.poll(() => page.getByRole('status').first().textContent()).toBe(`Session ${id} was deleted.`);
      expect(new URL(page.url()).pathname).toBe('/console/sessions');
      expect(
        (await http(portal.url, 'GET', `/api/sessions?session=${id}&client_id=other-co`, { headers: withToken(admin) }))
          .status,
      ).toBe(404);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it("a scoped user sees only its clients' sessions, no admin sections, and the portal's refusal", async () => {
    const p = await openPage(browser, WIDTHS.phone);
    const { page } = p;
    try {
      await signIn(page, portal, SCOPED, '/console/sessions');
      const rows = page.locator('main tbody tr');
      await expect.poll(() => rows.count()).toBeGreaterThan(0);
      // Sessions whose file names no client show the client id itself (no dash above it).
      const clients = await page.locator('main tbody tr td:nth-child(3)').allTextContents();
      expect(new Set(clients)).toEqual(new Set(['other-co']));
      const nav = await page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents();
      expect(nav).not.toContain('Licenses');
      expect(nav).not.toContain('Users');

      await page.goto(`${portal.url}/collect/?session=${latestAcme()}&client_id=acme-co`);
      const alert = page.locator('main [role="alert"]').first();
      await expect.poll(() => alert.textContent()).toMatch(/^[A-Z].+/);
      const text = (await alert.textContent())!;
      expect(text).not.toContain('[object Object]');
      const api = await http(portal.url, 'GET', `/api/sessions?session=${latestAcme()}&client_id=acme-co`, {
        headers: withToken(await login(portal.url, SCOPED.email, SCOPED.password)),
      });
      expect(text).toBe(api.body.error);
      await expectAccessible(page);
      expectNoConsoleErrors(p, [api.status]);
    } finally {
      await p.close();
    }
  });
});
