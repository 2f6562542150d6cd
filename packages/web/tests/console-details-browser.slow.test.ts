import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingFingerprint } from '@svc/protocol/node';
import { createLicense } from '@svc/test-support/factories';
import { launchChromium } from '@svc/test-support/chromium';
import { largeSessionDoc, uploadDoc } from '@svc/test-support/large-session';
import { expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { createScopedUser, signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { noSidewaysScroll } from './helpers/console-ui.ts';

/**
 * The console's smaller details, in a real browser against a real portal, as an admin at a
 * desktop and as a user scoped to the client on a phone: the findings table fits the screen
 * (the Details button is not cut off), a note shows in its row, the host filter is exact for
 * an address, counts have a thousands separator, a session without a client name shows its
 * client id (no dash above it), a 404 offers no retry, the sort choices say what comes first,
 * and the status controls keep the scanner's statuses apart from the ones a person sets.
 */

const CLIENT = 'details-co';
const USER = { email: 'analyst@details-co.test', password: 'analyst-password-0123' };
const SESSION = '20250301_090000';
const NOTE =
  'Ticket OPS-4411: the vendor patch is scheduled for the March maintenance window, approved by the change board';
/** 10.99.0.17 and the ten addresses it starts, plus 10.99.0.1: the "matches 11 hosts". */
const HOSTS = ['10.99.0.17', ...Array.from({ length: 10 }, (_, i) => `10.99.0.17${i}`), '10.99.0.1'];
const BASE = 1_200;

/** 1,200 findings as the scanner writes them, 12 more on the 10.99.0.x hosts (one with a note), no client name. */
function sessionDoc() {
  const doc = largeSessionDoc(SESSION, CLIENT, BASE);
  const extra = HOSTS.map((host, i) => {
    const fingerprint = findingFingerprint({ rule_id: 'svc.ssh.weak_kex', host, port: 22, protocol: 'tcp' });
    return {
      finding: {
        id: `x-${i}`,
        fingerprint,
        rule_id: 'svc.ssh.weak_kex',
        title: 'SSH weak key exchange algorithms enabled',
        severity: 'medium' as const,
        host,
        hostname: `jump-${i}.branch-office.details-co.test`,
        port: 22,
        protocol: 'tcp',
        service: 'ssh',
        cvss: 5.3,
        references: { cve: ['CVE-2023-48795', 'CVE-2008-5161'] },
      },
      entry: {
        title: 'SSH weak key exchange algorithms enabled',
        severity: 'medium',
        host,
        fingerprint,
        finding_id: `x-${i}`,
        status: 'persistent',
        status_changed: '2025-01-01T00:00:00.000Z',
        note: i === 0 ? NOTE : '',
        first_seen: '20250101_000000',
        prior_status: 'new',
        exception_status: null,
      },
    };
  });
  const { client: _, ...metadata } = doc.metadata;
  return {
    ...doc,
    metadata,
    summary: { ...doc.summary, total_findings: BASE + extra.length },
    findings: [...extra.map((e) => e.finding), ...doc.findings],
    remediation: [...extra.map((e) => e.entry), ...doc.remediation],
  };
}

/** What a function run in the page reads of an optgroup (the tests compile without the DOM's types). */
interface OptionGroup {
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<{ getAttribute(name: string): string | null }>;
}

describe("the console's smaller details", () => {
  let portal: TestPortal;
  let browser: Browser;

  beforeAll(async () => {
    portal = await startConsolePortal();
    const key = (await createLicense(portal, { tier: 'business', client_id: CLIENT })).key;
    await uploadDoc(portal.url, key, sessionDoc());
    await createScopedUser(portal, USER.email, USER.password, [CLIENT]);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  const view = `/collect/?session=${SESSION}&client_id=${CLIENT}`;
  const rows = (page: Page) => page.locator('section[aria-labelledby="findings-h"] tbody tr[data-finding]');
  const count = (page: Page) => page.locator('.findings-count').textContent();
  const noteRow = (page: Page) => rows(page).filter({ has: page.locator('[data-note]') });

  /** The findings table scrolls neither the page nor itself: every column, Details included, is on screen. */
  async function expectTableFits(page: Page, width: number): Promise<void> {
    expect(await noSidewaysScroll(page)).toBe(true);
    const wrap = page.locator('section[aria-labelledby="findings-h"] .table-wrap');
    expect(await wrap.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
    const details = rows(page)
      .first()
      .getByRole('button', { name: /^Details of / });
    const box = await details.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(width);
  }

  /** The enabled options of a select, as values. */
  const select = (page: Page, label: string) =>
    // The bulk bar's label wraps its select, so its name also holds the chosen option's text.
    label === 'Status for selected' ? page.getByLabel(label) : page.getByLabel(label, { exact: true });
  const choosable = (page: Page, label: string) =>
    select(page, label)
      .locator('option:not([disabled])')
      .evaluateAll((els) => els.map((e) => e.getAttribute('value')));
  const groups = (page: Page, label: string) =>
    select(page, label)
      .locator('optgroup')
      .evaluateAll((els) =>
        (els as unknown as OptionGroup[]).map((g) => [
          g.getAttribute('label'),
          Array.from(g.querySelectorAll('option')).map((o) => o.getAttribute('value')),
        ]),
      );

  it('admin at 1440 px: the table fits, the note shows, the host filter is exact, counts are grouped, statuses apart', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, view);
      await expect.poll(() => count(page), { timeout: 30_000 }).toBe('1,212 findings, page 1 of 49');
      await expectTableFits(page, WIDTHS.desktop.width);
      await expectAccessible(page);

      // The note, in its row: marked, its text there for every reader (clipped on screen, whole in the DOM).
      await page.getByLabel('Host', { exact: true }).fill('10.99.0.17');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => count(page)).toBe('1 finding');
      expect(await rows(page).locator('td').nth(3).textContent()).toContain('10.99.0.17');
      expect(await noteRow(page).locator('[data-note]').textContent()).toBe(`Note: ${NOTE}`);
      await expectTableFits(page, WIDTHS.desktop.width);

      // The start of an address, or of a name, is a prefix.
      await page.getByLabel('Host', { exact: true }).fill('10.99.0.');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => count(page)).toBe('12 findings');
      await page.getByLabel('Host', { exact: true }).fill('JUMP-5');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => count(page)).toBe('1 finding');

      // Statuses: a person chooses in progress or deferred; the scanner's own are shown apart, not offered.
      const row = rows(page).first();
      const name = (await row.getByRole('checkbox').getAttribute('aria-label'))!.replace(/^Select /, '');
      expect(await choosable(page, `Remediation status of ${name}`)).toEqual(['in_progress', 'deferred']);
      expect(await groups(page, `Remediation status of ${name}`)).toEqual([
        ['Set by people', ['in_progress', 'deferred']],
        ['Set by the scans', ['persistent']],
      ]);
      expect(await page.getByLabel(`Remediation status of ${name}`).inputValue()).toBe('persistent');
      await row.getByRole('checkbox').check();
      await expect.poll(() => choosable(page, 'Status for selected')).toEqual(['in_progress', 'deferred']);
      expect(await groups(page, 'Status')).toEqual([
        ['Set by people', ['in_progress', 'deferred']],
        ['Set by the scans', ['new', 'persistent', 'resolved']],
        ['Other', ['untracked']],
      ]);
      await expectAccessible(page);

      // The sessions list: grouped counts, the client id where the file named no client, clear orders.
      await page.goto(`${portal.url}/console/sessions`);
      const listed = page.locator(`tr[data-session="${SESSION}"]`);
      await expect.poll(() => listed.locator('td[data-label="Findings"]').textContent()).toBe('1,212');
      expect(await listed.locator('td[data-label="Client"]').textContent()).toBe(CLIENT);
      const sortChoices = await page
        .getByLabel('Sort by')
        .locator('option')
        .evaluateAll((els) => els.map((e) => e.textContent));
      expect(sortChoices).toEqual([
        'Uploaded: newest first',
        'Uploaded: oldest first',
        'Scanned: newest first',
        'Scanned: oldest first',
        'Target: A to Z',
        'Target: Z to A',
        'Client: A to Z',
        'Client: Z to A',
        'Risk: highest first',
        'Risk: lowest first',
        'Status: new first',
        'Status: archived first',
      ]);
      expect(await page.getByLabel('Order').count()).toBe(0);
      await page.getByLabel('Sort by').selectOption({ label: 'Risk: lowest first' });
      await page.getByRole('button', { name: 'Filter', exact: true }).click();
      await expect.poll(() => new URL(page.url()).search).toBe('?sort=risk_score&order=asc');
      expect(await page.getByLabel('Sort by').inputValue()).toBe('risk_score:asc');
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  }, 180_000);

  it('a session that does not exist: the portal’s message, and no “Try again” (it would answer 404 again)', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, `/collect/?session=20990101_000000&client_id=${CLIENT}`);
      await expect.poll(() => page.getByRole('alert').first().textContent()).toBe('Session not found');
      expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
      await expectAccessible(page);
      expectNoConsoleErrors(p, [404]);
    } finally {
      await p.close();
    }
  });

  it('scoped user at 390 px: the findings and the sessions list fit, the note shows, the scanner’s statuses apart', async () => {
    const p = await openPage(browser, WIDTHS.phone);
    const { page } = p;
    try {
      await signIn(page, portal, USER, view);
      await expect.poll(() => count(page), { timeout: 30_000 }).toBe('1,212 findings, page 1 of 49');
      await expectTableFits(page, WIDTHS.phone.width);
      await page.getByLabel('Host', { exact: true }).fill('10.99.0.17');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => count(page)).toBe('1 finding');
      expect(await noteRow(page).locator('[data-note]').textContent()).toBe(`Note: ${NOTE}`);
      await expectTableFits(page, WIDTHS.phone.width);
      await rows(page).first().getByRole('checkbox').check();
      await expect.poll(() => choosable(page, 'Status for selected')).toEqual(['in_progress', 'deferred']);
      await expectAccessible(page);

      await page.goto(`${portal.url}/console/sessions`);
      const listed = page.locator(`tr[data-session="${SESSION}"]`);
      await expect.poll(() => listed.locator('td[data-label="Findings"]').textContent()).toBe('1,212');
      expect(await noSidewaysScroll(page)).toBe(true);
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  }, 180_000);
});
