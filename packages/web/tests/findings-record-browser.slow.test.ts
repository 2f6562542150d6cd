import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingFingerprint } from '@svc/protocol/node';
import { createLicense } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { uploadDoc } from '@svc/test-support/large-session';
import { expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { noSidewaysScroll } from './helpers/console-ui.ts';
import { screenshot } from '@svc/test-support/screenshots';

/**
 * The findings of record in the session view, in a real browser against a real portal
 * (docs/findings-of-record.md): two scans of one target with a coverage block each, so the
 * second resolves a finding it looked for, leaves one on a host that did not answer not
 * checked, finds one new and keeps two. The panel of what changed filters the table; a false
 * positive set in the detail panel shows in the table and the summary; a status and a false
 * positive for selected findings go in one POST /api/findings/bulk each; an exception the
 * uploaded file set is shown as set by the upload, never as the approval of the approver it
 * named; the client's due days re-date the findings.
 */

const TARGET = '10.9.1.0/24';
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
const A: Spec = { id: 'a', rule_id: 'svc.telnet', title: 'Telnet', severity: 'critical', host: '10.9.1.1', port: 23 };
const B: Spec = { id: 'b', rule_id: 'svc.tls.v1_0', title: 'TLS 1.0', severity: 'high', host: '10.9.1.1', port: 443 };
const C: Spec = {
  id: 'c',
  rule_id: 'svc.ssh.kex',
  title: 'SSH weak kex',
  severity: 'medium',
  host: '10.9.1.2',
  port: 22,
};
const D: Spec = { id: 'd', rule_id: 'svc.smb.v1', title: 'SMBv1', severity: 'critical', host: '10.9.1.3', port: 445 };
const E: Spec = {
  id: 'e',
  rule_id: 'svc.http.headers',
  title: 'HTTP headers',
  severity: 'low',
  host: '10.9.1.1',
  port: 80,
};
const fpOf = (s: Spec) => findingFingerprint({ rule_id: s.rule_id, host: s.host, port: s.port, protocol: 'tcp' });
/** E first appears in S2; the others in S1. */
const firstSeen = (s: Spec) => (s === E ? S2 : S1);
const nameOf = (s: Spec) => `${s.title} on ${s.host}:${s.port}/tcp`;

function scanDoc(
  clientId: string,
  sessionId: string,
  specs: Spec[],
  hosts: string[],
  entries: Record<string, Record<string, unknown>> = {},
) {
  const at = `${sessionId.slice(0, 4)}-${sessionId.slice(4, 6)}-${sessionId.slice(6, 8)}T12:00:00.000Z`;
  return {
    metadata: {
      session_id: sessionId,
      client_id: clientId,
      client: 'Record Co',
      target: TARGET,
      started_at: at,
      finished_at: at,
    },
    summary: {
      risk_score: 70,
      risk_grade: 'D',
      risk_score_operational: 70,
      risk_grade_operational: 'D',
      exception_impact: { excepted_count: 0, score_delta: 0 },
      total_findings: specs.length,
      total_hosts: hosts.length,
    },
    coverage: { hosts, ports: { tcp: '1-1024', udp: '161' }, profile: 'quick_recon', tools: ['nmap'] },
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
      status: firstSeen(s) === sessionId ? 'new' : 'persistent',
      status_changed: at,
      note: '',
      first_seen: firstSeen(s),
      prior_status: null,
      exception_status: null,
      ...entries[s.id],
    })),
    remediation_resolved: [],
  };
}

describe('findings of record in the session view', () => {
  let portal: TestPortal;
  let browser: Browser;
  let admin: string;

  /** A client with two scans of TARGET: S2 keeps A and B, finds E, resolves C and does not check D. */
  async function seed(clientId: string): Promise<void> {
    const key = (await createLicense(portal, { tier: 'business', client_id: clientId })).key;
    await uploadDoc(portal.url, key, scanDoc(clientId, S1, [A, B, C, D], [A.host, C.host, D.host]));
    await uploadDoc(
      portal.url,
      key,
      scanDoc(clientId, S2, [A, B, E], [A.host, C.host], {
        // The file says a CISO accepted B: set by the upload's key, the named approver only reported.
        b: {
          exception_status: 'accepted',
          exception_reason: 'TLS terminator replaced in Q1',
          exception_approver: 'ciso@example.test',
          exception_approved_at: '2025-06-08T00:00:00.000Z',
          exception_expiry: '2099-12-31',
        },
      }),
    );
  }

  beforeAll(async () => {
    portal = await startConsolePortal();
    admin = await portal.adminToken();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  const findingsOf = async (clientId: string) =>
    (
      await http(portal.url, 'GET', `/api/sessions/${S2}/findings?client_id=${clientId}&limit=200`, {
        headers: withToken(admin),
      })
    ).body as {
      findings: { fingerprint: string; status: string | null; disposition: { reason: string } | null }[];
    };
  const rows = (page: Page) => page.locator('section[aria-labelledby="findings-h"] tbody tr[data-finding]');
  const rowOf = (page: Page, s: Spec) => rows(page).filter({ hasText: s.title });
  const count = (page: Page) => page.locator('.findings-count').textContent();
  const status = (page: Page) => page.getByRole('status').first().textContent();
  const changeButton = (page: Page, change: string) => page.locator(`.changes button[data-change="${change}"]`);
  const falsePositives = (page: Page) => page.locator('[data-false-positives]').textContent();

  it('filters by what the scan changed, marks a false positive and changes selected findings in one request', async () => {
    const client = 'record-co';
    await seed(client);
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const posts: string[] = [];
    const patches: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().includes('/api/findings/bulk')) posts.push(r.postData() ?? '');
      if (r.method() === 'PATCH' && r.url().includes('/api/remediation-update')) patches.push(r.postData() ?? '');
    });
    try {
      await signIn(page, portal, undefined, `/collect/?session=${S2}&client_id=${client}`);
      // What changed: one new, two kept, one resolved, one not checked; Telnet and HTTP overdue (B is excepted).
      await expect.poll(() => changeButton(page, 'new').textContent()).toBe('1 new');
      expect(await changeButton(page, 'persistent').textContent()).toBe('2 still open');
      expect(await changeButton(page, 'reopened').textContent()).toBe('0 reopened');
      expect(await changeButton(page, 'resolved').textContent()).toBe('1 resolved by this scan');
      expect(await changeButton(page, 'not_checked').textContent()).toBe('1 not checked by this scan');
      expect(await changeButton(page, 'overdue').textContent()).toBe('2 overdue');
      await expect.poll(() => count(page)).toBe('5 findings');
      await expect.poll(() => falsePositives(page)).toBe('0');

      // Each count filters the table; pressed again, it shows everything.
      await changeButton(page, 'resolved').click();
      await expect.poll(() => count(page)).toBe('1 finding');
      expect(await rowOf(page, C).locator('[data-mark="change"]').textContent()).toBe('Resolved by this scan');
      expect(await changeButton(page, 'resolved').getAttribute('aria-pressed')).toBe('true');
      expect(await page.getByLabel('Change in this scan').inputValue()).toBe('resolved');
      await changeButton(page, 'not_checked').click();
      await expect.poll(() => count(page)).toBe('1 finding');
      expect(await rowOf(page, D).locator('[data-mark="change"]').textContent()).toBe('Not checked by this scan');
      await changeButton(page, 'not_checked').click();
      await expect.poll(() => count(page)).toBe('5 findings');
      expect(await rowOf(page, E).locator('[data-mark="change"]').textContent()).toBe('New');
      await expectAccessible(page);

      // The exception the file claimed: set by the upload's key; the approver it named is not an approver.
      const bException = await rowOf(page, B).locator('[data-exception]').textContent();
      expect(bException).toMatch(
        /^accepted until 2099-12-31, set by upload \(license:[^)]+\); the file named approver ciso@example\.test$/,
      );

      // Overdue: the panel counts what this scan reported; the filter also finds SMBv1, open though not checked.
      await changeButton(page, 'overdue').click();
      await expect.poll(() => count(page)).toBe('2 findings');
      expect(await page.getByLabel('Change in this scan').inputValue()).toBe('found');
      expect(await rowOf(page, A).locator('[data-due]').textContent()).toBe('Due 2025-06-16 Overdue');
      await changeButton(page, 'overdue').click();
      await expect.poll(() => count(page)).toBe('5 findings');
      await page.getByLabel('Due date', { exact: true }).selectOption('true');
      await expect.poll(() => count(page)).toBe('3 findings');
      expect(await rowOf(page, D).locator('[data-due]').textContent()).toBe('Due 2025-06-16 Overdue');
      await page.getByRole('button', { name: 'Clear', exact: true }).click();
      await expect.poll(() => count(page)).toBe('5 findings');

      // A false positive from the detail panel: marked in the table and counted in the summary.
      await page.getByRole('button', { name: `Details of ${nameOf(E)}` }).click();
      const panel = page.locator('aside.finding-detail');
      await panel.getByLabel(`False positive reason for ${nameOf(E)}`).fill('headers set by the proxy in front');
      await panel.getByRole('button', { name: 'Mark as false positive' }).click();
      await expect.poll(() => status(page)).toBe(`“${E.title}” on ${E.host}:${E.port}/tcp marked as false positive.`);
      await expect
        .poll(() => rowOf(page, E).locator('[data-mark="false-positive"]').textContent())
        .toBe('False positive');
      await expect.poll(() => falsePositives(page)).toBe('1');
      await expect.poll(() => changeButton(page, 'overdue').textContent()).toBe('1 overdue');
      await expect
        .poll(() => panel.locator('ol.finding-history li[data-field="disposition"]').textContent())
        .toMatch(/: marked as false positive: headers set by the proxy in front$/);
      expect(await panel.locator('[data-disposition]').textContent()).toMatch(
        /^False positive: headers set by the proxy in front \(by .+, \d{4}-\d{2}-\d{2}\)$/,
      );
      await expectAccessible(page);
      await panel.getByRole('button', { name: 'Close details' }).click();
      await page.getByLabel('False positive', { exact: true }).selectOption('false_positive');
      await expect.poll(() => count(page)).toBe('1 finding');
      await page.getByRole('button', { name: 'Clear', exact: true }).click();
      await expect.poll(() => count(page)).toBe('5 findings');
      expect(patches).toHaveLength(1);

      // A status for three selected findings (one not checked by this scan): one bulk request.
      for (const s of [A, B, D]) await page.getByLabel(`Select ${nameOf(s)}`).check();
      await page.getByLabel('Status for selected').selectOption('in_progress');
      await expectAccessible(page);
      await screenshot(page.locator('section[aria-labelledby="findings-h"]'), 'findings-of-record.png');
      await page.getByRole('button', { name: 'Apply status' }).click();
      await expect
        .poll(() => status(page))
        .toBe('Status set to in progress for 3 selected findings: 3 matched, 3 changed.');
      expect(posts).toHaveLength(1);
      expect(JSON.parse(posts[0]!)).toEqual({
        fingerprints: [A, B, D].map(fpOf),
        client_id: client,
        target: TARGET,
        change: { status: 'in_progress' },
      });
      expect(patches).toHaveLength(1);
      const after = await findingsOf(client);
      for (const s of [A, B, D])
        expect(after.findings.find((f) => f.fingerprint === fpOf(s))?.status).toBe('in_progress');
      expect(after.findings.find((f) => f.fingerprint === fpOf(E))?.status).toBe('new');
      await expect.poll(() => page.getByLabel(`Remediation status of ${nameOf(A)}`).inputValue()).toBe('in_progress');

      // A false positive for two selected findings: one more bulk request.
      for (const s of [A, D]) await page.getByLabel(`Select ${nameOf(s)}`).check();
      await page.getByRole('button', { name: 'False positive for selected…' }).click();
      await page.getByLabel('False positive reason for selected findings').fill('lab hosts, not production');
      await page.getByRole('button', { name: 'Mark selected as false positive' }).click();
      await expect
        .poll(() => status(page))
        .toBe('Marked as false positive for 2 selected findings: 2 matched, 2 changed.');
      expect(posts).toHaveLength(2);
      expect(JSON.parse(posts[1]!).change).toEqual({
        disposition: { disposition: 'false_positive', reason: 'lab hosts, not production' },
      });
      const marked = (await findingsOf(client)).findings.filter((f) => f.disposition !== null);
      expect(marked.map((f) => f.fingerprint).sort()).toEqual([A, D, E].map(fpOf).sort());
      await expect.poll(() => changeButton(page, 'overdue').textContent()).toBe('0 overdue');
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('shows the changes at 390 px and re-dates findings with the due-date settings', async () => {
    const client = 'record-phone-co';
    await seed(client);
    const p = await openPage(browser, WIDTHS.phone);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, `/collect/?session=${S2}&client_id=${client}`);
      await expect.poll(() => changeButton(page, 'overdue').textContent()).toBe('2 overdue');
      expect(await noSidewaysScroll(page)).toBe(true);
      await changeButton(page, 'new').click();
      await expect.poll(() => count(page)).toBe('1 finding');
      await changeButton(page, 'new').click();
      await expect.poll(() => count(page)).toBe('5 findings');

      // Critical findings due in two years: Telnet (first seen 2025-06-01) is no longer overdue.
      const settings = page.getByRole('form', { name: 'Remediation due dates' });
      await expect.poll(() => settings.getByLabel('Critical (days)').inputValue()).toBe('15');
      await settings.getByLabel('Critical (days)').fill('730');
      await expectAccessible(page);
      await screenshot(page, 'findings-of-record-phone.png', { fullPage: true });
      await settings.getByRole('button', { name: 'Save due dates' }).click();
      await expect
        .poll(() => settings.getByRole('status').textContent())
        .toBe(`Due dates saved for client ${client}: its findings are dated again.`);
      await expect.poll(() => changeButton(page, 'overdue').textContent()).toBe('1 overdue');
      await expect.poll(() => rowOf(page, A).locator('[data-due]').textContent()).toBe('Due 2027-06-01');
      const stored = await http(portal.url, 'GET', `/api/remediation-settings?client_id=${client}`, {
        headers: withToken(admin),
      });
      expect(stored.body).toEqual({
        client_id: client,
        due_days: { critical: 730, high: 30, medium: 90, low: 180, info: null },
        defaults: false,
      });
      expect(await noSidewaysScroll(page)).toBe(true);
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
