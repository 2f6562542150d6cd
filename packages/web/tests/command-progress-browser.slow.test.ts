import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalClient, type PortalClient } from '@svc/client/kit';
import { createLicense, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { expectAccessible, expectNoConsoleErrors } from './helpers/browser.ts';
import { startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { noSidewaysScroll, openSignedIn, poll } from './helpers/console-ui.ts';

/**
 * A run_scan's progress on the Commands page, against a real portal: the agent's side
 * (heartbeat, poll, ack, progress reports) through the client package's typed portal client, the
 * page in a real browser. The open command shows a named <progress> bar with the task, the
 * percent and when it was reported, beside the elapsed time, and follows later reports; the
 * Fleet page shows the same under the agent's state while the command runs.
 */

const AGENT = 'svcd_0b0e5678';

describe('run_scan progress on the Commands page', () => {
  let portal: TestPortal;
  let browser: Browser;
  let agentApi: PortalClient;

  beforeAll(async () => {
    portal = await startConsolePortal();
    browser = await launchChromium();
    const { key } = await createLicense(portal, { tier: 'msp', client_id: uniqueClientId('progress') });
    agentApi = createPortalClient({
      target: { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 30 },
    });
    await agentApi.heartbeat({
      agent_id: AGENT,
      version: '4.2.3',
      timestamp: new Date().toISOString(),
      status: 'running',
      uptime_seconds: 60,
      system_info: { hostname: 'scanner-02' },
    });
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  /** A run_scan the agent has acked and reported `task` at `percent` for; its id and the report's time. */
  async function runningScan(task: string, percent: number): Promise<{ id: number; reportedAt: string }> {
    const admin = await portal.adminToken();
    const queued = await http(portal.url, 'POST', '/api/agent-commands', {
      headers: withToken(admin),
      json: { agent_id: AGENT, command_type: 'run_scan', payload: { targets: '10.30.0.0/24' } },
    });
    expect(queued.status, queued.text).toBe(201);
    const id = queued.body.commands[0].id as number;
    expect((await agentApi.pollCommands(AGENT)).commands.map((c) => c.id)).toContain(id);
    await agentApi.reportCommandStatus({ command_id: id, agent_id: AGENT, status: 'acked' });
    await agentApi.reportCommandStatus({
      command_id: id,
      agent_id: AGENT,
      status: 'acked',
      progress: { task, percent },
    });
    const detail = await http(portal.url, 'GET', `/api/agent-commands?command_id=${id}`, { headers: withToken(admin) });
    return { id, reportedAt: detail.body.command.progress.reported_at as string };
  }

  const timeOf = (iso: string) => `${iso.slice(11, 19)} UTC`;

  for (const width of ['desktop', 'phone'] as const) {
    it(`shows the progress bar with its task, percent and time, and follows new reports (${width})`, async () => {
      const { id, reportedAt } = await runningScan('SYN Stealth Scan', 45.2);
      const p = await openSignedIn(browser, portal, width, '/console/commands');
      const { page } = p;
      try {
        await page.getByRole('button', { name: `Show command ${id}` }).click();
        const view = page.locator('#command-detail');
        const bar = view.getByRole('progressbar', { name: 'SYN Stealth Scan: 45.2%' });
        await poll(() => bar.count()).toBe(1);
        expect(await bar.getAttribute('value')).toBe('45.2');
        expect(await bar.getAttribute('max')).toBe('100');
        const field = view.locator('[data-field="progress"]');
        expect(await field.locator('span').allTextContents()).toEqual([
          'SYN Stealth Scan: 45.2%',
          `as of ${timeOf(reportedAt)}`,
        ]);
        // The elapsed time stays beside it.
        expect(await view.locator('[data-field="elapsed"]').textContent()).toMatch(
          /^running for .+; the agent reports when it ends$/,
        );
        await expectAccessible(page);
        if (width === 'phone') expect(await noSidewaysScroll(page)).toBe(true);

        // A later report reaches the open page without a reload (the view refreshes while the command runs).
        await agentApi.reportCommandStatus({
          command_id: id,
          agent_id: AGENT,
          status: 'acked',
          progress: { task: 'Service scan', percent: 80 },
        });
        await poll(() => view.getByRole('progressbar', { name: 'Service scan: 80%' }).count()).toBe(1);
        expect(await view.getByRole('progressbar').getAttribute('value')).toBe('80');

        // Once the command ends, the bar gives way to its result.
        await agentApi.reportCommandStatus({ command_id: id, agent_id: AGENT, status: 'completed', exit_code: 0 });
        await poll(() => view.locator('[data-field="exit-code"]').textContent()).toBe('0');
        expect(await view.getByRole('progressbar').count()).toBe(0);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });
  }

  for (const width of ['desktop', 'phone'] as const) {
    it(`the fleet listing shows what the agent runs now with its progress, and follows it (${width})`, async () => {
      const { id, reportedAt } = await runningScan('Ping Scan', 12.5);
      const p = await openSignedIn(browser, portal, width, '/console/fleet');
      const { page } = p;
      try {
        const running = page.locator(`tr[data-agent="${AGENT}"] [data-running="${id}"]`);
        await poll(() => running.count()).toBe(1);
        expect(await running.locator('span').first().textContent()).toBe(`run_scan #${id}`);
        const bar = running.getByRole('progressbar', { name: 'Ping Scan: 12.5%' });
        expect(await bar.getAttribute('value')).toBe('12.5');
        expect(await running.locator('[data-field="progress"] .adm-hint').textContent()).toBe(
          `as of ${timeOf(reportedAt)}`,
        );
        await expectAccessible(page);
        if (width === 'phone') expect(await noSidewaysScroll(page)).toBe(true);

        // The page reads the fleet again while an agent runs a command: a new report shows without a reload.
        await agentApi.reportCommandStatus({
          command_id: id,
          agent_id: AGENT,
          status: 'acked',
          progress: { task: 'SYN Stealth Scan', percent: 60 },
        });
        await poll(() => running.getByRole('progressbar', { name: 'SYN Stealth Scan: 60%' }).count()).toBe(1);

        // A later stage of the pipeline has no percent of its own: the bar shows it under way, named by the stage.
        await agentApi.reportCommandStatus({
          command_id: id,
          agent_id: AGENT,
          status: 'acked',
          progress: { task: 'Uploading to the portal', percent: 0, stage: 'upload' },
        });
        const upload = running.getByRole('progressbar', { name: 'Uploading to the portal' });
        await poll(() => upload.count()).toBe(1);
        expect(await upload.getAttribute('value')).toBeNull();

        // Once it ends, the agent runs nothing.
        await agentApi.reportCommandStatus({ command_id: id, agent_id: AGENT, status: 'completed', exit_code: 0 });
        await poll(() => running.count()).toBe(0);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });
  }
});
