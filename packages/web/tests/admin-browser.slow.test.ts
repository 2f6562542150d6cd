import { verify } from '@octokit/webhooks-methods';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, uniqueClientId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type TestCa } from '@svc/test-support/https-receiver';
import { launchChromium } from '@svc/test-support/chromium';
import { expectAccessible, expectNoConsoleErrors, WIDTHS } from './helpers/browser.ts';
import { startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { alert, confirm, notice, openSignedIn, poll, row } from './helpers/console-ui.ts';
import { screenshot } from '@svc/test-support/screenshots';

/**
 * Licenses, Users, Webhooks, Audit and Database health in a real browser against a real
 * portal: keys that really validate, users that really sign in, webhooks delivered to a
 * local HTTPS receiver (127.0.0.1 allowed and its test CA trusted for this portal only).
 */

let portal: TestPortal;
let browser: Browser;
let ca: TestCa;
let receiver: HttpsReceiver;
let admin: string;

beforeAll(async () => {
  ca = await createTestCa();
  receiver = await HttpsReceiver.start(ca);
  portal = await startConsolePortal({
    env: { SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', SVC_WEBHOOK_CA_FILE: ca.caFile },
  });
  browser = await launchChromium();
  admin = await portal.adminToken();
});

afterAll(async () => {
  await browser?.close();
  await portal?.close();
  await receiver?.close();
  await ca?.cleanup();
});

const open = (width: keyof typeof WIDTHS, target: string) => openSignedIn(browser, portal, width, target);

describe('licenses page', () => {
  it('creates a key shown once and copyable, then deactivates, activates, revokes and deletes it', async () => {
    const p = await open('desktop', '/console/licenses');
    const { page } = p;
    try {
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: portal.url });
      const clientId = uniqueClientId('lic');
      const form = page.getByRole('form', { name: 'Create a key' });
      await form.getByLabel('Tier').selectOption('business');
      await form.getByLabel('Client id').fill(clientId);
      await form.getByLabel('Name').fill('Acme production');
      await form.getByLabel('Max agents (optional)').fill('0');
      await form.getByRole('button', { name: 'Create key' }).click();
      await poll(() => alert(page).textContent()).toBe('Max agents must be a whole number from 1 to 1000000000');
      await form.getByLabel('Max agents (optional)').fill('3');
      await form.getByRole('button', { name: 'Create key' }).click();

      const keyInput = page.getByLabel('License key (shown once; it cannot be read again)');
      await poll(() => keyInput.count()).toBe(1);
      const key = await keyInput.inputValue();
      expect(key).toMatch(/^svc_biz_[0-9a-f]{64}$/);
      await page.getByRole('button', { name: 'Copy' }).click();
      await poll(() => page.locator('.adm-secret [role="status"]').textContent()).toBe('Copied');
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);
      const check = await http(portal.url, 'GET', '/api/license', { headers: withKey(key) });
      expect(check.body).toMatchObject({
        valid: true,
        tier: 'business',
        client_id: clientId,
        limits: { max_agents: 3 },
      });
      await expectAccessible(page);

      const list = await http(portal.url, 'GET', `/api/licenses?client_id=${clientId}`, { headers: withToken(admin) });
      const id: string = list.body.licenses[0].id;
      const r = row(page, 'license', id);
      await poll(() => r.locator('td').nth(3).textContent()).toBe('active');
      await page.getByRole('button', { name: 'I have stored the key' }).click();
      expect(await keyInput.count()).toBe(0);

      await confirm(page, r, 'Deactivate');
      await poll(() => r.locator('td').nth(3).textContent()).toBe('inactive');
      expect((await http(portal.url, 'GET', '/api/license', { headers: withKey(key) })).body.reason).toBe('inactive');
      await r.getByRole('button', { name: 'Activate' }).click();
      await poll(() => r.locator('td').nth(3).textContent()).toBe('active');

      // By keyboard: the question takes focus on Cancel, Escape closes it and focus returns; the key stays.
      await r.getByRole('button', { name: 'Revoke', exact: true }).focus();
      await page.keyboard.press('Enter');
      await poll(() => page.evaluate('document.activeElement?.textContent')).toBe('Cancel');
      await page.keyboard.press('Escape');
      expect(await page.getByRole('alertdialog').count()).toBe(0);
      await poll(() => page.evaluate('document.activeElement?.textContent')).toBe('Revoke');
      expect(await r.locator('td').nth(3).textContent()).toBe('active');
      await confirm(page, r, 'Revoke');
      await poll(() => r.locator('td').nth(3).textContent()).toBe('revoked');
      expect((await http(portal.url, 'GET', '/api/license', { headers: withKey(key) })).body.reason).toBe('revoked');
      // The status filter: not among the active keys, alone among the revoked ones, back with Any.
      const keys = page.locator('section[aria-labelledby="lic-list"]');
      await keys.getByLabel('Status').selectOption('active');
      await poll(() => r.count()).toBe(0);
      await keys.getByLabel('Status').selectOption('revoked');
      await poll(() => keys.locator('tbody tr td:nth-of-type(4)').allTextContents()).toEqual(['revoked']);
      await keys.getByLabel('Status').selectOption('');
      await poll(() => r.count()).toBe(1);

      await confirm(page, r, 'Delete');
      await poll(() => r.count()).toBe(0);
      await poll(() => notice(page).textContent()).toBe('License Acme production deleted');
      await screenshot(page, 'licenses.png', { fullPage: true });
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it("shows the portal's message when it refuses a key", async () => {
    const p = await open('phone', '/console/licenses');
    const { page } = p;
    try {
      const form = page.getByRole('form', { name: 'Create a key' });
      await form.getByLabel('Client id').fill(uniqueClientId('lic'));
      await form.getByLabel('Name').fill('Past key');
      await form.getByLabel('Expires on (optional)').fill('2001-01-01');
      await form.getByRole('button', { name: 'Create key' }).click();
      const direct = await http(portal.url, 'POST', '/api/licenses', {
        headers: withToken(admin),
        json: { tier: 'professional', client_id: 'x', name: 'Past key', expires_at: '2001-01-01T23:59:59.999Z' },
      });
      expect(direct.status).toBe(400);
      await poll(() => alert(page).textContent()).toBe(direct.body.error);
      await expectAccessible(page);
      expectNoConsoleErrors(p, [400]);
    } finally {
      await p.close();
    }
  });
});

describe('users page', () => {
  it('creates a scoped user who can sign in, changes its role and clients, deletes it', async () => {
    const p = await open('phone', '/console/users');
    const { page } = p;
    try {
      const email = `${uniqueClientId('member')}@test.local`;
      const form = page.getByRole('form', { name: 'Create a user' });
      await form.getByLabel('Email').fill(email);
      await form.getByLabel('Password (12 or more characters)').fill('member-password-0123');
      await form.getByLabel('Role').selectOption('member');
      await form.getByLabel('Client ids (a member sees only these)').fill('acme, beta');
      await form.getByRole('button', { name: 'Create user' }).click();
      await poll(() => notice(page).textContent()).toBe(`User ${email} created`);
      const r = row(page, 'user', email);
      await poll(() => r.locator('td').allTextContents()).toEqual([
        'member',
        'acme, beta',
        expect.stringMatching(/UTC$/),
        expect.stringContaining('Edit'),
      ]);
      const token = await http(portal.url, 'POST', '/identity/token', {
        form: { grant_type: 'password', username: email, password: 'member-password-0123' },
      });
      expect(token.status).toBe(200);

      // The same e-mail again: the identity provider's own refusal.
      await form.getByLabel('Email').fill(email);
      await form.getByLabel('Password (12 or more characters)').fill('member-password-0123');
      await form.getByLabel('Client ids (a member sees only these)').fill('acme');
      await form.getByRole('button', { name: 'Create user' }).click();
      await poll(() => alert(page).textContent()).toMatch(/\S/);
      expect(await alert(page).textContent()).not.toMatch(/object Object|Error:/);

      await r.getByRole('button', { name: 'Edit' }).click();
      await r.getByLabel('Client ids').fill('acme');
      await r.getByRole('button', { name: 'Save' }).click();
      await poll(() => notice(page).textContent()).toBe(`User ${email} updated`);
      await poll(() => r.locator('td').nth(1).textContent()).toBe('acme');
      await expectAccessible(page);

      // The admin signs the user out everywhere: the session the user had stops refreshing.
      await confirm(page, r, 'Sign out everywhere');
      await poll(() => notice(page).textContent()).toBe(`${email} signed out everywhere (1 session ended)`);
      const refresh = await http(portal.url, 'POST', '/identity/token', {
        form: { grant_type: 'refresh_token', refresh_token: token.body.refresh_token },
      });
      expect({ status: refresh.status, body: refresh.body }).toEqual({
        status: 400,
        body: { error: 'invalid_grant', error_description: 'Invalid or expired refresh token' },
      });

      await confirm(page, r, 'Delete');
      await poll(() => r.count()).toBe(0);
      const users = await fetch(`${portal.url}/identity/admin/users`, {
        headers: { authorization: `Bearer ${admin}` },
      });
      expect(((await users.json()) as { users: { email: string }[] }).users.map((u) => u.email)).not.toContain(email);
      expectNoConsoleErrors(p, [409]);
    } finally {
      await p.close();
    }
  });
});

describe('webhooks page', () => {
  it('subscribes with the secret shown once, pings, shows the delivery log, redelivers, disables and re-enables, deletes', async () => {
    const p = await open('desktop', '/console/webhooks');
    const { page } = p;
    try {
      const url = receiver.url('/console-hook');
      const form = page.getByRole('form', { name: 'Subscribe' });
      await form.getByLabel('HTTPS URL').fill('http://example.com/hook');
      await form.getByLabel('scan_completed').check();
      await form.getByRole('button', { name: 'Subscribe' }).click();
      await poll(() => alert(page).textContent()).toBe('URL must be an https:// address');
      await form.getByLabel('HTTPS URL').fill(url);
      await form.getByLabel('command_failed').check();
      await form.getByLabel('Description (optional)').fill('Console test hook');
      await form.getByRole('button', { name: 'Subscribe' }).click();

      const secretInput = page.getByLabel(
        'Signing secret (X-SVC-Signature-256 key) (shown once; it cannot be read again)',
      );
      await poll(() => secretInput.count()).toBe(1);
      const secret = await secretInput.inputValue();
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      await expectAccessible(page);
      await page.getByRole('button', { name: 'I have stored the secret' }).click();
      expect(await secretInput.count()).toBe(0);

      const subs = await http(portal.url, 'GET', '/api/webhooks', { headers: withToken(admin) });
      const sub = subs.body.subscriptions.find((s: { url: string }) => s.url === url);
      expect(sub.event_types).toEqual(['scan_completed', 'command_failed']);
      const r = row(page, 'webhook', sub.id);
      await poll(() => r.locator('td').nth(2).textContent()).toBe('enabled');

      receiver.reset();
      await r.getByRole('button', { name: 'Ping' }).click();
      await poll(() => notice(page).textContent()).toBe(`Ping to ${url}: succeeded (HTTP 200)`);
      const [ping] = await receiver.waitFor(1);
      expect(ping!.json.event_type).toBe('ping');
      expect(await verify(secret, ping!.body, String(ping!.headers['x-svc-signature-256']))).toBe(true);

      const log = page.getByRole('group', { name: 'Delivery log' });
      await poll(() => log.locator('tbody tr').count()).toBe(1);
      receiver.respond({ kind: 'status', status: 503 });
      const first = log.locator('tbody tr').first();
      await first.getByRole('button', { name: 'Redeliver' }).click();
      await poll(() => page.locator('p.adm-notice').last().textContent()).toMatch(
        /^Redelivered evt_[0-9a-f]{16}: failed \(HTTP 503\)$/,
      );
      await poll(() => log.locator('tbody tr').count()).toBe(2);
      expect(await log.locator('tbody tr').first().textContent()).toContain('redelivery of #');
      receiver.respond({ kind: 'status', status: 200, body: 'ok' });
      await screenshot(page, 'webhooks.png', { fullPage: true });

      await poll(() => r.locator('td').nth(2).textContent()).toBe('enabledFailed deliveries in a row: 1');
      await confirm(page, r, 'Disable');
      await poll(() => r.locator('td').nth(2).locator('.adm-badge').textContent()).toBe('disabled');
      // Re-enabling clears the failure count.
      await r.getByRole('button', { name: 'Re-enable' }).click();
      await poll(() => r.locator('td').nth(2).textContent()).toBe('enabled');

      await confirm(page, r, 'Delete');
      await poll(() => r.count()).toBe(0);
      const after = await http(portal.url, 'GET', '/api/webhooks', { headers: withToken(admin) });
      expect(after.body.subscriptions.map((s: { id: string }) => s.id)).not.toContain(sub.id);
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});

describe('audit log and database health', () => {
  it('filters the audit log by type and session and pages through it', async () => {
    const clientId = uniqueClientId('audit');
    for (let i = 0; i < 23; i++) await createLicense(portal, { client_id: clientId, name: `Audit key ${i}` });
    const p = await open('phone', '/console/audit');
    const { page } = p;
    try {
      const form = page.getByRole('form', { name: 'Audit filters' });
      await form.getByLabel('Event type').selectOption('license_created');
      await form.getByLabel('Days (1-90)').fill('7');
      await form.getByRole('button', { name: 'Apply filters' }).click();
      const direct = await http(portal.url, 'GET', '/api/audit?days=7&type=license_created', {
        headers: withToken(admin),
      });
      const total: number = direct.body.total;
      expect(total).toBeGreaterThanOrEqual(23);
      await poll(() => page.getByText(`${total} events in the last 7 days`).count()).toBe(1);
      const rows = page.getByRole('group', { name: 'Audit events' }).locator('tbody tr');
      await poll(() => rows.count()).toBe(20);
      expect(new Set(await rows.locator('th').allTextContents())).toEqual(new Set(['license_created']));
      const pager = page.getByRole('navigation', { name: 'Audit events pages' });
      expect(await pager.textContent()).toContain(`1–20 of ${total}`);
      await pager.getByRole('button', { name: 'Next' }).click();
      await poll(() => pager.textContent()).toContain(`21–${Math.min(40, total)} of ${total}`);
      await expectAccessible(page);

      await form.getByLabel('Days (1-90)').fill('91');
      await form.getByRole('button', { name: 'Apply filters' }).click();
      await poll(() => alert(page).textContent()).toBe('Days must be a whole number from 1 to 90');
      await form.getByLabel('Days (1-90)').fill('30');
      await form.getByLabel('Event type').selectOption('');
      await form.getByLabel('Session id').fill('20990101_000000');
      await form.getByRole('button', { name: 'Apply filters' }).click();
      await poll(() => page.getByText('0 events in the last 30 days').count()).toBe(1);
      await form.getByLabel('Session id').fill('');
      await form.getByRole('button', { name: 'Apply filters' }).click();
      await poll(() => rows.count()).toBe(20);
      await page.setViewportSize(WIDTHS.desktop);
      await screenshot(page, 'audit.png', { fullPage: true });
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('shows database health', async () => {
    const p = await open('phone', '/console/health');
    const { page } = p;
    try {
      const direct = await http(portal.url, 'GET', '/api/db-health', { headers: withToken(admin) });
      await poll(() => page.locator('[data-field="health"]').textContent()).toBe(direct.body.neon_usage.health);
      const tables = page.getByRole('region', { name: 'Rows per table' }).locator('tbody th');
      expect(await tables.allTextContents()).toEqual(Object.keys(direct.body.table_counts));
      expect(await row(page, 'table', 'audit_events').locator('td').textContent()).toMatch(/^\d+$/);
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
