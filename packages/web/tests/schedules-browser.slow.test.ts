import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalClient } from '@svc/client/kit';
import { createLicense, uniqueClientId } from '@svc/test-support/factories';
import { schedulesApi } from '@svc/test-support/portal-schedules';
import { launchChromium } from '@svc/test-support/chromium';
import { expectAccessible, expectNoConsoleErrors } from './helpers/browser.ts';
import { startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { alert, confirm, noSidewaysScroll, notice, openSignedIn, poll, row } from './helpers/console-ui.ts';

/**
 * The Schedules page against a real portal: a schedule created for an agent through the form
 * (a bad cron refused with the portal's message naming the field), edited, disabled and
 * deleted, each change read back from the API; at phone and desktop widths.
 */

const AGENT = 'svcd_5c4ed001';

describe('the Schedules page', () => {
  let portal: TestPortal;
  let browser: Browser;
  let admin: string;
  let clientId: string;
  const api = () => schedulesApi(portal.url, () => admin);

  beforeAll(async () => {
    portal = await startConsolePortal();
    admin = await portal.adminToken();
    browser = await launchChromium();
    clientId = uniqueClientId('sched');
    const { key } = await createLicense(portal, { tier: 'msp', client_id: clientId });
    const agentApi = createPortalClient({
      target: { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 30 },
    });
    await agentApi.heartbeat({
      agent_id: AGENT,
      version: '4.2.3',
      timestamp: new Date().toISOString(),
      status: 'running',
      uptime_seconds: 60,
      system_info: { hostname: 'scanner-07' },
    });
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  for (const width of ['desktop', 'phone'] as const) {
    it(`creates, edits, disables and deletes a schedule (${width})`, async () => {
      const name = `Nightly ${width}`;
      const p = await openSignedIn(browser, portal, width, '/console/schedules');
      const { page } = p;
      try {
        const form = page.getByRole('form', { name: 'New schedule' });
        await poll(() => form.getByLabel('Agent', { exact: true }).locator('option').count()).toBeGreaterThan(1);
        await form.getByLabel('Agent', { exact: true }).selectOption({ label: `scanner-07 (${clientId})` });
        await form.getByLabel('Name').fill(name);
        await form.getByLabel('Targets').fill('192.0.2.0/28');
        await form.getByLabel('Ports (optional)').fill('22,443');
        await form.getByLabel('Cron (5 fields, or 6 with seconds)').fill('61 2 * * *');
        await form.getByLabel('Time zone').fill('Europe/Berlin');
        await form.getByRole('button', { name: 'Create schedule' }).click();
        await poll(() => alert(page).textContent()).toMatch(/^cron is not a valid cron pattern/);

        await form.getByLabel('Cron (5 fields, or 6 with seconds)').fill('30 2 * * *');
        await form.getByRole('button', { name: 'Create schedule' }).click();
        await poll(() => notice(page).textContent()).toBe(`Created ${name}`);
        const created = (await api().list(clientId)).body.schedules.find((s: { name: string }) => s.name === name);
        expect(created).toMatchObject({
          agent_id: AGENT,
          client_id: clientId,
          targets: '192.0.2.0/28',
          ports: '22,443',
          profile: null,
          cron: '30 2 * * *',
          timezone: 'Europe/Berlin',
          upload: true,
          enabled: true,
        });
        const line = row(page, 'schedule', created.id);
        await poll(() => line.locator('td').nth(2).textContent()).toBe('30 2 * * * Europe/Berlin');
        await expectAccessible(page);
        if (width === 'phone') expect(await noSidewaysScroll(page)).toBe(true);

        await line.getByRole('button', { name: 'Disable' }).click();
        await poll(() => notice(page).textContent()).toBe(`Disabled ${name}`);
        await poll(() => line.locator('td').nth(4).textContent()).toBe('disabled');
        expect((await api().get(created.id)).body.schedule.enabled).toBe(false);

        await line.getByRole('button', { name: 'Edit' }).click();
        const edit = page.getByRole('form', { name: `Edit schedule ${name}` });
        await edit.getByLabel('Cron (5 fields, or 6 with seconds)').fill('0 4 * * 1');
        await edit.getByRole('button', { name: 'Save schedule' }).click();
        await poll(() => notice(page).textContent()).toBe(`Saved ${name}`);
        expect((await api().get(created.id)).body.schedule).toMatchObject({ cron: '0 4 * * 1', enabled: false });

        await confirm(page, line, 'Delete');
        await poll(() => line.count()).toBe(0);
        expect((await api().get(created.id)).status).toBe(404);
        await expectAccessible(page);
        expectNoConsoleErrors(p, [400]);
      } finally {
        await p.close();
      }
    });
  }
});
