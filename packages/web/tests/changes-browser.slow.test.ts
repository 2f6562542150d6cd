import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingFingerprint } from '@svc/protocol/node';
import { createLicense } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { uploadDoc } from '@svc/test-support/large-session';
import {
  type ConsolePage,
  expectAccessible,
  expectNoConsoleErrors,
  openPage,
  untilSettled,
  WIDTHS,
} from './helpers/browser.ts';
import { createScopedUser, signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { noSidewaysScroll, poll } from './helpers/console-ui.ts';

/**
 * "What changed" (/console/changes) in a real browser against a real portal: per target, the
 * counts of what its latest scan changed, each a link to that scan's findings filtered by the
 * change, where a finding resolved by the scan is listed and its details show its history
 * (a person's status change, then the scan that resolved it). As an admin at 1440 px and as a
 * customer user, who sees only their client, at 390 px.
 */

const TARGET = '10.7.1.0/24';
const OTHER_TARGET = '10.7.2.0/24';
const S1 = '20250601_120000';
const S2 = '20250608_120000';

interface Spec {
  id: string;
  rule_id: string;
  title: string;
  severity: string;
  host: string;
  port: number;
}
const A: Spec = { id: 'a', rule_id: 'svc.telnet', title: 'Telnet', severity: 'critical', host: '10.7.1.1', port: 23 };
const B: Spec = { id: 'b', rule_id: 'svc.tls.v1_0', title: 'TLS 1.0', severity: 'high', host: '10.7.1.1', port: 443 };
const C: Spec = {
  id: 'c',
  rule_id: 'svc.ssh.kex',
  title: 'SSH weak kex',
  severity: 'medium',
  host: '10.7.1.2',
  port: 22,
};
const D: Spec = { id: 'd', rule_id: 'svc.smb.v1', title: 'SMBv1', severity: 'critical', host: '10.7.1.2', port: 445 };
const fpOf = (s: Spec) => findingFingerprint({ rule_id: s.rule_id, host: s.host, port: s.port, protocol: 'tcp' });
const nameOf = (s: Spec) => `${s.title} on ${s.host}:${s.port}/tcp`;

function scanDoc(clientId: string, target: string, sessionId: string, specs: Spec[]) {
  const at = `${sessionId.slice(0, 4)}-${sessionId.slice(4, 6)}-${sessionId.slice(6, 8)}T12:00:00.000Z`;
  return {
    metadata: { session_id: sessionId, client_id: clientId, target, started_at: at, finished_at: at },
    summary: { risk_score: 60, risk_grade: 'C', total_findings: specs.length, total_hosts: 2 },
    coverage: { hosts: ['10.7.1.1', '10.7.1.2'], ports: { tcp: '1-1024' }, profile: 'quick_recon', tools: ['nmap'] },
    findings: specs.map((s) => ({
      id: `f-${s.id}`,
      rule_id: s.rule_id,
      title: s.title,
      severity: s.severity,
      host: s.host,
      port: s.port,
      protocol: 'tcp',
      fingerprint: fpOf(s),
    })),
    remediation: specs.map((s) => ({
      title: s.title,
      severity: s.severity,
      host: s.host,
      fingerprint: fpOf(s),
      status: 'new',
      note: '',
      first_seen: sessionId,
      exception_status: null,
    })),
    remediation_resolved: [],
  };
}

const CUSTOMER = { email: 'changes-user@example.test', password: 'Changes-user-pass-9' };

describe('what changed per target', () => {
  let portal: TestPortal;
  let browser: Browser;

  beforeAll(async () => {
    portal = await startConsolePortal();
    browser = await launchChromium();
    const admin = await portal.adminToken();
    const key = (await createLicense(portal, { tier: 'business', client_id: 'changes-co' })).key;
    await uploadDoc(portal.url, key, scanDoc('changes-co', TARGET, S1, [A, B, C]));
    // A person takes C in hand before the next scan finds it fixed.
    const patch = await http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(admin),
      json: { session_id: S1, client_id: 'changes-co', items: [{ fingerprint: fpOf(C), status: 'in_progress' }] },
    });
    if (patch.status !== 200) throw new Error(`remediation-update ${patch.status} ${patch.text}`);
    // The second scan looked at both hosts: C is resolved, D is new, A and B are still open.
    await uploadDoc(portal.url, key, scanDoc('changes-co', TARGET, S2, [A, B, D]));
    const otherKey = (await createLicense(portal, { tier: 'business', client_id: 'elsewhere-co' })).key;
    await uploadDoc(portal.url, otherKey, scanDoc('elsewhere-co', OTHER_TARGET, S1, [A]));
    await createScopedUser(portal, CUSTOMER.email, CUSTOMER.password, ['changes-co']);
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  const targetRow = (page: Page, target: string) => page.locator(`tr[data-target="${target}"]`);
  const link = (page: Page, change: string) => targetRow(page, TARGET).locator(`a[data-change="${change}"]`);

  /** No axe finding of moderate impact or worse (expectAccessible injects axe and checks serious ones). */
  async function expectAxeClean(page: Page): Promise<void> {
    await expectAccessible(page);
    const found = await page.evaluate(async () => {
      type Violation = { id: string; impact: string | null; nodes: { html: string }[] };
      const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: Violation[] }> } }).axe;
      return (await axe.run()).violations
        .filter((v) => ['moderate', 'serious', 'critical'].includes(v.impact ?? ''))
        .map((v) => ({ id: v.id, nodes: v.nodes.map((n) => n.html) }));
    });
    expect(found).toEqual([]);
  }

  /** From the target's "Resolved" count to the finding the scan resolved and its history. */
  async function resolvedAndItsHistory(p: ConsolePage, by: 'mouse' | 'keyboard'): Promise<void> {
    const { page } = p;
    await poll(() => link(page, 'new').textContent()).toBe('1');
    expect(await link(page, 'resolved').textContent()).toBe('1');
    expect(await link(page, 'persistent').textContent()).toBe('2');
    expect(await link(page, 'reopened').count()).toBe(0);
    expect(await link(page, 'not_checked').count()).toBe(0);
    // The target's open findings on the Findings page, by its address filters.
    const open = new URL(
      (await targetRow(page, TARGET)
        .getByRole('link', { name: `Open findings of ${TARGET}` })
        .getAttribute('href')) ?? '',
      portal.url,
    );
    expect([open.pathname, Object.fromEntries(open.searchParams)]).toEqual([
      '/console/findings',
      { client_id: 'changes-co', target: TARGET, status: 'open' },
    ]);
    expect(await noSidewaysScroll(page)).toBe(true);
    await expectAxeClean(page);

    // The count is a link: followed by a click, or by the keyboard (focus and Enter).
    if (by === 'mouse') await link(page, 'resolved').click();
    else {
      await link(page, 'resolved').focus();
      await page.keyboard.press('Enter');
    }
    await poll(() => new URL(page.url()).search).toBe(`?session=${S2}&client_id=changes-co&change=resolved`);
    const rows = page.locator('section[aria-labelledby="findings-h"] tbody tr[data-finding]');
    await poll(() => page.locator('.findings-count').textContent()).toBe('1 finding');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().locator('[data-mark="change"]').textContent()).toBe('Resolved by this scan');
    expect(await page.getByLabel('Change in this scan').inputValue()).toBe('resolved');
    expect(await page.locator('.changes button[data-change="resolved"]').getAttribute('aria-pressed')).toBe('true');
    // A count's button writes its change into the address; back shows the change before it again.
    await untilSettled(page);
    await page.locator('.changes button[data-change="new"]').click();
    await poll(() => new URL(page.url()).search).toBe(`?session=${S2}&client_id=changes-co&change=new`);
    await poll(() => rows.first().locator('[data-mark="change"]').textContent()).toBe('New');
    await page.goBack();
    await poll(() => page.locator('.changes button[data-change="resolved"]').getAttribute('aria-pressed')).toBe('true');
    await poll(() => rows.first().locator('[data-mark="change"]').textContent()).toBe('Resolved by this scan');
    expect(await page.getByLabel('Change in this scan').inputValue()).toBe('resolved');
    expect(await page.locator('.findings-count').textContent()).toBe('1 finding');
    // The session's own panel names the scan it compares with.
    const previous = page.locator('.changes [data-previous-scan]');
    await poll(() => previous.textContent()).toBe('Since the scan of 2025-06-01 12:00 UTC.');
    expect(await previous.getByRole('link').getAttribute('href')).toBe(`/collect/?session=${S1}&client_id=changes-co`);

    const details = page.getByRole('button', { name: `Details of ${nameOf(C)}` });
    if (by === 'mouse') await details.click();
    else {
      await details.focus();
      await page.keyboard.press('Enter');
    }
    const history = page.locator('aside.finding-detail ol.finding-history li[data-field="status"]');
    await poll(() => history.count()).toBe(2);
    expect(await history.nth(0).textContent()).toMatch(/, admin@test\.local: status new → in progress$/);
    expect(await history.nth(1).textContent()).toMatch(
      new RegExp(`: status in progress → resolved.*, with session ${S2}$`),
    );
    expect(await noSidewaysScroll(page)).toBe(true);
    await expectAxeClean(page);
  }

  it('shows an admin every target, and a finding resolved by a scan under what changed with its history (1440 px)', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    try {
      await signIn(p.page, portal, undefined, '/console/changes');
      await poll(() => targetRow(p.page, OTHER_TARGET).locator('a[data-change="new"]').textContent()).toBe('1');
      expect(await p.page.locator('tbody tr[data-target]').count()).toBe(2);
      expect(await targetRow(p.page, OTHER_TARGET).textContent()).toContain('none (first scan)');
      await resolvedAndItsHistory(p, 'mouse');
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('shows a customer user only their client, and the same changes and history, by keyboard (390 px)', async () => {
    const p = await openPage(browser, WIDTHS.phone);
    try {
      await signIn(p.page, portal, CUSTOMER, '/console/changes');
      await poll(() => link(p.page, 'new').textContent()).toBe('1');
      expect(await p.page.locator('tbody tr[data-target]').count()).toBe(1);
      await resolvedAndItsHistory(p, 'keyboard');
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});

describe('what changed, page by page', () => {
  let portal: TestPortal;
  let browser: Browser;
  const PAGED = 'paged-co';
  const member = { email: 'paged-user@example.test', password: 'Paged-user-pass-9' };
  /** 28 targets, in the listing's order (by target within the client). */
  const targets = Array.from({ length: 28 }, (_, i) => `10.8.${String(i).padStart(2, '0')}.0/24`);

  beforeAll(async () => {
    portal = await startConsolePortal();
    browser = await launchChromium();
    const key = (await createLicense(portal, { tier: 'business', client_id: PAGED })).key;
    for (const [i, target] of targets.entries())
      await uploadDoc(portal.url, key, scanDoc(PAGED, target, `20250701_1200${String(i).padStart(2, '0')}`, [A]));
    await createScopedUser(portal, member.email, member.password, [PAGED]);
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  const shownTargets = (page: Page) =>
    page.locator('tbody tr[data-target]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-target')));

  for (const width of ['desktop', 'phone'] as const)
    it(`pages through the targets with a rows-per-page choice (${width})`, async () => {
      const p = await openPage(browser, WIDTHS[width]);
      const { page } = p;
      const pager = page.getByRole('navigation', { name: 'Target pages' });
      try {
        await signIn(page, portal, member, '/console/changes');
        // 100 a page by default: all 28 on one page, no Previous or Next.
        await poll(() => shownTargets(page)).toEqual(targets);
        expect(await pager.getByRole('button').count()).toBe(0);
        await pager.getByLabel('Rows per page').selectOption('25');
        await poll(() => shownTargets(page)).toEqual(targets.slice(0, 25));
        expect(await pager.textContent()).toContain('Page 1');
        expect(await pager.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
        await untilSettled(page);
        await pager.getByRole('button', { name: 'Next' }).click();
        await poll(() => shownTargets(page)).toEqual(targets.slice(25));
        expect(await pager.textContent()).toContain('Page 2');
        expect(await pager.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
        expect(await noSidewaysScroll(page)).toBe(true);
        await expectAccessible(page);
        await untilSettled(page);
        await pager.getByRole('button', { name: 'Previous' }).click();
        await poll(() => shownTargets(page)).toEqual(targets.slice(0, 25));
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });
});
