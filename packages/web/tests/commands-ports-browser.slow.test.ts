import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PORT_LIST_RULE } from '@svc/protocol';
import { createPortalClient } from '@svc/client/kit';
import { createLicense, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { uploadDoc } from '@svc/test-support/large-session';
import { expectAccessible, expectNoConsoleErrors } from './helpers/browser.ts';
import { startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { alert, noSidewaysScroll, notice, openSignedIn, poll } from './helpers/console-ui.ts';

/**
 * run_scan's `ports` in the command form, against a real portal: checked with the protocol's
 * rule before anything is sent, and offered from a known target's coverage (GET /api/targets:
 * what its latest scan looked at) as "T:…,U:…" with its profile, one click to fill both; before
 * any target is typed, the chosen agent's client's targets, one click to fill the target too.
 */

const TARGET = '10.20.0.0/24';
const AGENT = 'svcd_0b0e1234';

describe('run_scan ports in the command form', () => {
  let portal: TestPortal;
  let browser: Browser;
  let admin: string;
  let clientId: string;

  beforeAll(async () => {
    portal = await startConsolePortal();
    admin = await portal.adminToken();
    browser = await launchChromium();
    clientId = uniqueClientId('ports');
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
      system_info: { hostname: 'scanner-01', os: 'Debian GNU/Linux 13', cpu_count: 2, memory_total_mb: 2048 },
    });
    // The target's latest scan: what it looked at.
    await uploadDoc(portal.url, key, {
      metadata: {
        session_id: '20250701_090000',
        client_id: clientId,
        target: TARGET,
        started_at: '2025-07-01T09:00:00.000Z',
        finished_at: '2025-07-01T09:20:00.000Z',
      },
      summary: { risk_score: 20, risk_grade: 'B', total_findings: 0, total_hosts: 2 },
      coverage: {
        hosts: ['10.20.0.5', '10.20.0.9'],
        ports: { tcp: '22,80,443,8000-8100', udp: '161' },
        profile: 'quick_recon',
        tools: ['nmap'],
      },
      findings: [],
      remediation: [],
      remediation_resolved: [],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  for (const width of ['desktop', 'phone'] as const) {
    it(`refuses a bad port list and fills the usual ports and profile of a known target (${width})`, async () => {
      const p = await openSignedIn(browser, portal, width, '/console/commands');
      const { page } = p;
      try {
        const form = page.getByRole('form', { name: 'Queue a command' });
        await poll(() => form.getByLabel('Agent', { exact: true }).locator('option').count()).toBeGreaterThan(1);
        await form.getByLabel('Agent', { exact: true }).selectOption({ label: `scanner-01 (${clientId})` });
        const offer = form.locator(`.ports-offer[data-target="${TARGET}"]`);

        // Before any target is typed: the agent's client's targets, one click to fill target, ports and profile.
        await poll(() => offer.getByRole('button').textContent()).toBe(
          `Scan ${TARGET} with its usual ports and profile`,
        );
        await offer.getByRole('button').click();
        expect(await form.getByLabel('Targets').inputValue()).toBe(TARGET);
        expect(await form.getByLabel('Ports (optional)').inputValue()).toBe('T:22,80,443,8000-8100,U:161');
        expect(await form.getByLabel('Profile (optional)').inputValue()).toBe('quick_recon');
        await form.getByLabel('Profile (optional)').fill('');

        // A target the portal does not know offers nothing.
        await form.getByLabel('Targets').fill('10.99.0.1');
        await form.getByLabel('Ports (optional)').fill('22,70000');
        expect(await form.locator('.ports-offer').count()).toBe(0);
        const before = await http(portal.url, 'GET', '/api/agent-commands?limit=500', { headers: withToken(admin) });
        await form.getByRole('button', { name: 'Queue command' }).click();
        await poll(() => alert(page).textContent()).toBe(`payload.ports must be ${PORT_LIST_RULE}`);
        const after = await http(portal.url, 'GET', '/api/agent-commands?limit=500', { headers: withToken(admin) });
        expect(after.body.commands).toHaveLength(before.body.commands.length);

        // The known target: its latest scan's ports (TCP and UDP) and profile, one click.
        await form.getByLabel('Targets').fill(`${TARGET}`);
        await poll(() => offer.locator('p').textContent()).toBe(
          `Known target ${TARGET} (${clientId}), last scanned 2025-07-01 09:20 UTC: usual ports T:22,80,443,8000-8100,U:161, profile quick_recon.`,
        );
        await expectAccessible(page);
        if (width === 'phone') expect(await noSidewaysScroll(page)).toBe(true);
        await offer.getByRole('button', { name: `Use the usual ports and profile of ${TARGET}` }).click();
        expect(await form.getByLabel('Ports (optional)').inputValue()).toBe('T:22,80,443,8000-8100,U:161');
        expect(await form.getByLabel('Profile (optional)').inputValue()).toBe('quick_recon');
        await form.getByRole('button', { name: 'Queue command' }).click();
        await poll(() => notice(page).textContent()).toMatch(/^Queued 1 command #\d+$/);
        const id = Number((await notice(page).textContent())!.split('#')[1]);
        const stored = await http(portal.url, 'GET', `/api/agent-commands?command_id=${id}`, {
          headers: withToken(admin),
        });
        expect(stored.body.command.payload).toEqual({
          targets: TARGET,
          profile: 'quick_recon',
          ports: 'T:22,80,443,8000-8100,U:161',
        });
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });
  }
});
