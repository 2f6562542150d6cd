import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingFingerprint } from '@svc/protocol/node';
import { createLicense } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { ADMIN_EMAIL, signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';

/**
 * Triage of one finding at a time in the session view, in a real browser against a real
 * portal: a status change touches only that host's entry, and a risk exception is accepted
 * (the operational score drops below the actual one) and withdrawn.
 */

const CLIENT = 'triage-co';
const fp = (rule_id: string, host: string, port: number) =>
  findingFingerprint({ rule_id, host, port, protocol: 'tcp' });
const FP1 = fp('svc.tls.v1_0', '10.9.0.1', 443);
const FP2 = fp('svc.tls.v1_0', '10.9.0.2', 443);
const FP_TELNET = fp('svc.telnet', '10.9.0.2', 23);

function entry(title: string, severity: string, host: string, fingerprint: string) {
  return {
    title,
    severity,
    host,
    fingerprint,
    status: 'persistent',
    status_changed: '2025-01-01T00:00:00.000Z',
    note: '',
    first_seen: '20250101_000000',
    prior_status: null,
    exception_status: null,
  };
}

function sessionDoc(sessionId: string) {
  const finding = (id: string, rule_id: string, title: string, severity: string, host: string, port: number) => ({
    id,
    rule_id,
    title,
    severity,
    host,
    port,
    protocol: 'tcp',
    fingerprint: fp(rule_id, host, port),
  });
  return {
    metadata: { session_id: sessionId, client_id: CLIENT, client: 'Triage Co', target: '10.9.0.0/24' },
    summary: {
      risk_score: 73,
      risk_grade: 'D',
      risk_score_operational: 73,
      risk_grade_operational: 'D',
      exception_impact: { excepted_count: 0, score_delta: 0 },
      total_findings: 3,
      total_hosts: 2,
    },
    findings: [
      finding('f-001', 'svc.telnet', 'Telnet', 'critical', '10.9.0.2', 23),
      finding('f-002', 'svc.tls.v1_0', 'TLS 1.0', 'high', '10.9.0.1', 443),
      finding('f-003', 'svc.tls.v1_0', 'TLS 1.0', 'high', '10.9.0.2', 443),
    ],
    remediation: [
      entry('Telnet', 'critical', '10.9.0.2', FP_TELNET),
      entry('TLS 1.0', 'high', '10.9.0.1', FP1),
      entry('TLS 1.0', 'high', '10.9.0.2', FP2),
    ],
    remediation_resolved: [],
  };
}

describe('triage one finding at a time in the session view', () => {
  let portal: TestPortal;
  let browser: Browser;
  let admin: string;
  let sessionId: string;

  beforeAll(async () => {
    portal = await startConsolePortal();
    admin = await portal.adminToken();
    const key = (await createLicense(portal, { tier: 'business', client_id: CLIENT })).key;
    const form = new FormData();
    form.append(
      'session_json',
      new Blob([JSON.stringify(sessionDoc('20250601_120000_triage'))], { type: 'application/json' }),
      'session_results.json',
    );
    const res = await fetch(`${portal.url}/api/upload`, { method: 'POST', headers: withKey(key), body: form });
    expect(res.status).toBe(200);
    sessionId = ((await res.json()) as { session_id: string }).session_id;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  const stored = async () =>
    (
      await http(portal.url, 'GET', `/api/download?session=${sessionId}&client_id=${CLIENT}`, {
        headers: withToken(admin),
      })
    ).body as { remediation: { fingerprint: string; status: string; exception_status: string | null }[] };
  const byFp = async (f: string) => (await stored()).remediation.find((e) => e.fingerprint === f)!;

  it('changes the status of one host only, then accepts and withdraws an exception', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, `/collect/?session=${sessionId}&client_id=${CLIENT}`);
      const status1 = page.getByLabel('Remediation status of TLS 1.0 on 10.9.0.1:443/tcp');
      const status2 = page.getByLabel('Remediation status of TLS 1.0 on 10.9.0.2:443/tcp');
      await status1.waitFor();
      await status1.selectOption('in_progress');
      await expect
        .poll(() => page.getByRole('status').first().textContent())
        .toBe('“TLS 1.0” is now in progress on 10.9.0.1:443/tcp.');
      expect((await byFp(FP1)).status).toBe('in_progress');
      expect((await byFp(FP2)).status).toBe('persistent');
      await expect.poll(() => status2.inputValue()).toBe('persistent');
      await expect.poll(() => status1.inputValue()).toBe('in_progress');

      // Exception on the critical: the operational score drops below the actual one.
      const scores = page.locator('.scores');
      const operational = () => scores.locator('.score').nth(1).textContent();
      expect(await operational()).toBe('Operational riskD73 / 100');
      await page.getByRole('button', { name: 'Add exception for Telnet on 10.9.0.2:23/tcp' }).click();
      const expiry = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
      await page.getByLabel('Exception reason for Telnet on 10.9.0.2:23/tcp').fill('isolated management VLAN');
      await page.getByLabel('Exception expiry for Telnet on 10.9.0.2:23/tcp').fill(expiry);
      await page.getByRole('button', { name: 'Save exception' }).click();
      await expect
        .poll(() => page.getByRole('status').first().textContent())
        .toBe(`Exception accepted for “Telnet” on 10.9.0.2:23/tcp until ${expiry}.`);
      const telnetRow = page.locator('section[aria-labelledby="findings-h"] tbody tr').filter({ hasText: 'Telnet' });
      await expect
        .poll(() => telnetRow.locator('[data-exception]').textContent())
        .toBe(`accepted until ${expiry}, by ${ADMIN_EMAIL}`);
      // Two open highs: 100 − 60·e^(−10/50) = 51, grade C.
      await expect.poll(operational).toBe('Operational riskC51 / 100');
      expect(await scores.locator('.score').first().textContent()).toBe('Actual riskD73 / 100');
      expect((await byFp(FP_TELNET)).exception_status).toBe('accepted');
      await expectAccessible(page);

      await page.getByRole('button', { name: 'Change exception for Telnet on 10.9.0.2:23/tcp' }).click();
      await page.getByRole('button', { name: 'Withdraw exception' }).click();
      await expect
        .poll(() => page.getByRole('status').first().textContent())
        .toBe('Exception withdrawn for “Telnet” on 10.9.0.2:23/tcp.');
      await expect.poll(() => telnetRow.locator('[data-exception]').textContent()).toBe('none');
      await expect.poll(operational).toBe('Operational riskD73 / 100');
      expect((await byFp(FP_TELNET)).exception_status).toBeNull();
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
