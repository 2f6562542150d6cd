import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_SEARCH_RULE } from '@svc/protocol';
import { createLicense, createScopedUser, uniqueClientId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { alert, noSidewaysScroll, notice, openSignedIn, poll, row } from './helpers/console-ui.ts';

/**
 * The fleet search among 1,000 agents registered through the real heartbeat API: the
 * Fleet page finds an agent by host name, address or id, as the admin and as a
 * customer user who sees only their client's agents; the Commands form finds one by typing and
 * tells two `raspberrypi` agents apart by their addresses.
 */

const AGENTS = 1000;
/** Heartbeats in flight at once while registering the fleet. */
const PARALLEL = 8;
const PI_A = 'svcd_5ea4c0a1';
const PI_B = 'svcd_5ea4c0b1';

let portal: TestPortal;
let browser: Browser;
let admin: string;
let clientA: string;
let clientB: string;
let member: { email: string; password: string };

beforeAll(async () => {
  portal = await startConsolePortal();
  browser = await launchChromium();
  admin = await portal.adminToken();
  clientA = uniqueClientId('fsa');
  clientB = uniqueClientId('fsb');
  const keys = [
    (await createLicense(portal, { tier: 'msp', client_id: clientA, max_agents: AGENTS })).key,
    (await createLicense(portal, { tier: 'msp', client_id: clientB, max_agents: AGENTS })).key,
  ];
  // host-0000 … host-0997 alternate between the clients; one raspberrypi in each.
  const fleet = Array.from({ length: AGENTS - 2 }, (_, i) => ({
    key: keys[i % 2] as string,
    agent_id: `svcd_${(0x10000000 + i).toString(16)}`,
    hostname: `host-${String(i).padStart(4, '0')}`,
    ip: `10.50.${Math.floor(i / 250)}.${(i % 250) + 1}`,
  }));
  fleet.push(
    { key: keys[0] as string, agent_id: PI_A, hostname: 'raspberrypi', ip: '10.77.0.5' },
    { key: keys[1] as string, agent_id: PI_B, hostname: 'raspberrypi', ip: '10.77.0.6' },
  );
  const register = async (a: (typeof fleet)[number]) => {
    const res = await http(portal.url, 'POST', '/api/health', {
      headers: withKey(a.key),
      json: {
        agent_id: a.agent_id,
        version: '4.2.3',
        timestamp: new Date().toISOString(),
        status: 'running',
        uptime_seconds: 60,
        system_info: { hostname: a.hostname, ip_addresses: [a.ip] },
      },
    });
    expect(res.status, res.text).toBe(200);
  };
  for (let i = 0; i < fleet.length; i += PARALLEL) await Promise.all(fleet.slice(i, i + PARALLEL).map(register));
  const all = await http(portal.url, 'GET', '/api/health?agents=true&limit=1', { headers: withToken(admin) });
  expect(all.body.counts).toEqual({ online: AGENTS, stale: 0, deregistered: 0 });
  const user = await createScopedUser(portal, [clientA]);
  member = { email: user.email, password: user.password };
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await portal?.close();
});

const agentRows = (page: Page) =>
  page.locator('tr[data-agent]').evaluateAll((r) => r.map((x) => x.getAttribute('data-agent')));

async function search(page: Page, term: string): Promise<void> {
  const filters = page.getByRole('form', { name: 'Agent filters' });
  await filters.getByLabel('Search').fill(term);
  await filters.getByRole('button', { name: 'Apply filters' }).click();
}

describe('the fleet search among 1,000 agents', () => {
  for (const width of ['desktop', 'phone'] as const) {
    it(`finds an agent by host name, address and id on the Fleet page as the admin (${width})`, async () => {
      const p = await openSignedIn(browser, portal, width, '/console/fleet');
      const { page } = p;
      try {
        await poll(() => page.locator('[data-counts]').textContent()).toBe('1,000 online0 stale0 deregistered');
        await search(page, 'RaspBerry');
        await poll(() => agentRows(page)).toEqual([PI_A, PI_B]);
        // The search is in the address: a view to link to.
        expect(new URL(page.url()).search).toBe('?q=RaspBerry');
        expect(await page.locator('[data-counts]').textContent()).toBe('2 online0 stale0 deregistered');
        expect(await row(page, 'agent', PI_B).locator('th').textContent()).toBe('raspberrypi10.77.0.6');
        await expectAccessible(page);
        expect(await noSidewaysScroll(page)).toBe(true);
        await search(page, '10.50.3.17');
        await poll(() => agentRows(page)).toEqual([(0x10000000 + 766).toString(16)].map((h) => `svcd_${h}`));
        await search(page, PI_B);
        await poll(() => agentRows(page)).toEqual([PI_B]);
        // A term the search cannot take is refused on the page, before any request.
        await search(page, 'rasp berry');
        await poll(() => alert(page).textContent()).toBe(`Search must be ${AGENT_SEARCH_RULE}`);
        expect(await agentRows(page)).toEqual([PI_B]);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });
  }

  for (const width of ['desktop', 'phone'] as const) {
    it(`finds only the customer user's own client's agents on the Fleet page, by keyboard (${width})`, async () => {
      const p = await openPage(browser, WIDTHS[width]);
      const { page } = p;
      try {
        await signIn(page, portal, member, '/console/fleet');
        await poll(() => page.locator('[data-counts]').textContent()).toBe(`${AGENTS / 2} online0 stale0 deregistered`);
        const box = page.getByRole('form', { name: 'Agent filters' }).getByLabel('Search');
        await box.focus();
        await page.keyboard.type('raspberrypi');
        await page.keyboard.press('Enter');
        await poll(() => agentRows(page)).toEqual([PI_A]);
        // host-0001 is client B's.
        await box.fill('host-0001');
        await box.press('Enter');
        await poll(() => page.getByText('No agents match these filters.').isVisible()).toBe(true);
        expect(await page.locator('[data-counts]').textContent()).toBe('0 online0 stale0 deregistered');
        await expectAccessible(page);
        expect(await noSidewaysScroll(page)).toBe(true);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });
  }

  for (const width of ['desktop', 'phone'] as const) {
    it(`picks an agent in the Commands form by typing, two raspberrypi told apart by address (${width})`, async () => {
      const p = await openSignedIn(browser, portal, width, '/console/commands');
      const { page } = p;
      try {
        const form = page.getByRole('form', { name: 'Queue a command' });
        const picker = form.getByLabel('Agent', { exact: true });
        const status = page.locator('#queue-agent-count');
        await poll(() => status.textContent()).toBe('1,000 agents');
        // Sorted by name: the first host names, not the first heartbeats.
        expect((await picker.locator('option').allTextContents()).slice(0, 3)).toEqual([
          'Choose an agent',
          `host-0000 · 10.50.0.1 (${clientA})`,
          `host-0001 · 10.50.0.2 (${clientB})`,
        ]);
        // By keyboard: type into the search, the list narrows to the two raspberrypi by address.
        await form.getByLabel('Find an agent').focus();
        await page.keyboard.type('raspberrypi');
        // The list narrows to these two from "ras" on, while the rest is still being typed: the
        // status names the whole search only once the last key is in.
        await poll(() => status.textContent()).toBe('2 agents match raspberrypi');
        await poll(() => picker.locator('option').allTextContents()).toEqual([
          'Choose an agent',
          `raspberrypi · 10.77.0.5 (${clientA})`,
          `raspberrypi · 10.77.0.6 (${clientB})`,
        ]);
        expect(await picker.inputValue()).toBe('');
        await expectAccessible(page);
        expect(await noSidewaysScroll(page)).toBe(true);
        // An address leaves one agent: it is chosen.
        await form.getByLabel('Find an agent').fill('10.77.0.6');
        await poll(() => picker.inputValue()).toBe(JSON.stringify([clientB, PI_B]));
        expect(await status.textContent()).toBe('1 agent matches 10.77.0.6');
        // Enter in the search takes the first match and does not send the form.
        await form.getByLabel('Find an agent').fill('host-099');
        await poll(() => status.textContent()).toBe('8 agents match host-099');
        await form.getByLabel('Find an agent').press('Enter');
        await poll(() => picker.inputValue()).toBe(
          JSON.stringify([clientA, `svcd_${(0x10000000 + 990).toString(16)}`]),
        );
        expect(await notice(page).count()).toBe(0);
        await form.getByLabel('Command').selectOption('set_log_level');
        await form.getByLabel('Level', { exact: true }).selectOption('debug');
        await form.getByRole('button', { name: 'Queue command' }).click();
        await poll(() => notice(page).textContent()).toMatch(/^Queued 1 command #\d+$/);
        const id = Number((await notice(page).textContent())?.split('#')[1]);
        const stored = await http(portal.url, 'GET', `/api/agent-commands?command_id=${id}`, {
          headers: withToken(admin),
        });
        expect(stored.body.command).toMatchObject({
          agent_id: `svcd_${(0x10000000 + 990).toString(16)}`,
          client_id: clientA,
          agent_hostname: 'host-0990',
          command_type: 'set_log_level',
          status: 'pending',
        });
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });
  }
});
