import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalClient, type PortalClient } from '@svc/client/kit';
import { createLicense, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { ADMIN_EMAIL } from '@svc/test-support/portal';
import { expectAccessible, expectNoConsoleErrors } from './helpers/browser.ts';
import { startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { openSignedIn, poll } from './helpers/console-ui.ts';

/**
 * Cancelling a command on the Commands page, against a real portal, the agent's side
 * through the client package's typed portal client. A pending command is failed at once and
 * the open view shows the result; a running one shows the requested cancellation, its agent
 * is told in its poll answer, and the view follows the agent's failed report.
 */

const AGENT = 'svcd_0c0a1234';

describe('cancel on the Commands page', () => {
  let portal: TestPortal;
  let browser: Browser;
  let agentApi: PortalClient;

  beforeAll(async () => {
    portal = await startConsolePortal();
    browser = await launchChromium();
    const { key } = await createLicense(portal, { tier: 'msp', client_id: uniqueClientId('cancel') });
    agentApi = createPortalClient({
      target: { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 30 },
    });
    await agentApi.heartbeat({
      agent_id: AGENT,
      version: '4.2.3',
      timestamp: new Date().toISOString(),
      status: 'running',
      uptime_seconds: 60,
    });
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  async function queueScan(): Promise<number> {
    const queued = await http(portal.url, 'POST', '/api/agent-commands', {
      headers: withToken(await portal.adminToken()),
      json: { agent_id: AGENT, command_type: 'run_scan', payload: { targets: '10.30.0.0/24' } },
    });
    expect(queued.status, queued.text).toBe(201);
    return queued.body.commands[0].id as number;
  }

  it('a pending command: confirmed with a reason, failed at once, the result shown', async () => {
    const id = await queueScan();
    const p = await openSignedIn(browser, portal, 'desktop', '/console/commands');
    const { page } = p;
    try {
      await page.getByRole('button', { name: `Show command ${id}` }).click();
      const view = page.locator('#command-detail');
      await view.getByLabel('Reason (optional)').fill('wrong subnet');
      await view.getByRole('button', { name: 'Cancel command' }).click();
      const question = view.getByRole('alertdialog', { name: 'Cancel command' });
      expect(await question.textContent()).toContain(`Cancel command #${id}? It is failed at once and never runs.`);
      await expectAccessible(page);
      await question.getByRole('button', { name: 'Yes, cancel it' }).click();
      await poll(() => view.locator('[data-field="stderr"]').textContent()).toBe(
        `Cancelled by ${ADMIN_EMAIL}: wrong subnet`,
      );
      expect(await view.locator('.adm-badge').textContent()).toBe('failed');
      expect(await view.locator('[data-field="exit-code"]').textContent()).toBe('—');
      // Nothing left to cancel; the history row says failed too.
      expect(await view.getByRole('button', { name: 'Cancel command' }).count()).toBe(0);
      await poll(() => page.locator(`tr[data-command="${id}"] .adm-badge`).textContent()).toBe('failed');
      expect((await agentApi.pollCommands(AGENT)).commands.map((c) => c.id)).not.toContain(id);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('a running command: the cancellation is shown as requested, then the agent reports it failed (exit 130)', async () => {
    const id = await queueScan();
    expect((await agentApi.pollCommands(AGENT)).commands.map((c) => c.id)).toContain(id);
    await agentApi.reportCommandStatus({ command_id: id, agent_id: AGENT, status: 'acked' });
    const p = await openSignedIn(browser, portal, 'phone', '/console/commands');
    const { page } = p;
    try {
      await page.getByRole('button', { name: `Show command ${id}` }).click();
      const view = page.locator('#command-detail');
      await view.getByRole('button', { name: 'Cancel command' }).click();
      const question = view.getByRole('alertdialog', { name: 'Cancel command' });
      expect(await question.textContent()).toContain('It is running: its agent is told');
      await question.getByRole('button', { name: 'Yes, cancel it' }).click();
      await poll(() => view.locator('[data-field="cancel-requested"]').count()).toBe(1);
      expect(await view.locator('[data-field="cancel-requested"]').textContent()).toMatch(
        new RegExp(`by ${ADMIN_EMAIL} \\(waiting for the agent to stop it\\)$`),
      );
      const told = await agentApi.pollCommands(AGENT);
      expect(told.cancel).toEqual([{ id, reason: `Cancelled by ${ADMIN_EMAIL}` }]);
      await agentApi.reportCommandStatus({
        command_id: id,
        agent_id: AGENT,
        status: 'failed',
        exit_code: 130,
        stderr: `command cancelled: the process tree was killed\nCancelled by ${ADMIN_EMAIL}\n`,
      });
      await poll(() => view.locator('[data-field="exit-code"]').textContent()).toBe('130');
      expect(await view.locator('.adm-badge').textContent()).toBe('failed');
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
