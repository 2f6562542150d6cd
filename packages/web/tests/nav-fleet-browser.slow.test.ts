import type { HeartbeatBody } from '@svc/protocol';
import type pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalClient, type PortalClient } from '@svc/client/kit';
import { createLicense, createScopedUser, openDb, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { launchChromium } from '@svc/test-support/chromium';
import { expectAccessible, expectNoConsoleErrors, openPage, untilSettled, WIDTHS } from './helpers/browser.ts';
import { signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { firstDrawnLabel, noSidewaysScroll, openSignedIn, poll, row } from './helpers/console-ui.ts';
import { screenshot } from '@svc/test-support/screenshots';

/**
 * The console by permission and by name: the navigation an admin and a scoped user get, the
 * plain page a scoped user gets at an admin address, the fleet by host name and address with
 * its filters and counts, and session links that name their client, from each page that
 * builds one, for a session id stored under two clients.
 */

let portal: TestPortal;
let browser: Browser;
let db: pg.Client;
let clientX: string;
let clientY: string;
let apiX: PortalClient;
let apiY: PortalClient;
let member: { email: string; password: string };
const sessionId = newSessionId();
const EDGE = 'svcd_ed9e0001';
const DB = 'svcd_ed9e0002';
const GONE = 'svcd_ed9e0003';
const OTHER = 'svcd_ed9e0004';
let commandId: number;

const beat = (api: PortalClient, agentId: string, extra: Partial<HeartbeatBody> = {}) =>
  api.heartbeat({
    agent_id: agentId,
    version: '4.2.3',
    timestamp: new Date().toISOString(),
    status: 'running',
    uptime_seconds: 60,
    ...extra,
  });

const apiOf = (key: string) =>
  createPortalClient({ target: { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 30 } });

beforeAll(async () => {
  portal = await startConsolePortal();
  browser = await launchChromium();
  db = await openDb(portal);
  clientX = uniqueClientId('navx');
  clientY = uniqueClientId('navy');
  const x = await createLicense(portal, { tier: 'msp', client_id: clientX });
  const y = await createLicense(portal, { tier: 'business', client_id: clientY });
  apiX = apiOf(x.key);
  apiY = apiOf(y.key);
  // One session id under both clients.
  for (const key of [x.key, y.key])
    expect(
      (await postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json', sessionId)))).status,
    ).toBe(200);
  await beat(apiX, EDGE, { system_info: { hostname: 'edge-01', ip_addresses: ['10.20.0.1', 'fd00::1'] } });
  await beat(apiX, DB, { system_info: { hostname: 'db-01', ip_addresses: ['10.20.0.2'] }, version: '4.1.0' });
  await beat(apiX, GONE, { system_info: { hostname: 'old-01' } });
  await beat(apiY, OTHER, { system_info: { hostname: 'branch-01', ip_addresses: ['192.168.7.4'] } });
  await db.query(`UPDATE agents SET received_at = received_at - interval '2 hours' WHERE agent_id = $1`, [DB]);
  const admin = withToken(await portal.adminToken());
  expect(
    (await http(portal.url, 'PATCH', '/api/agents', { headers: admin, json: { agent_id: GONE, action: 'deregister' } }))
      .status,
  ).toBe(200);
  // A command of client X's agent whose result is the session id both clients have.
  const queued = await http(portal.url, 'POST', '/api/agent-commands', {
    headers: admin,
    json: { command_type: 'run_scan', agent_id: EDGE, client_id: clientX, payload: { targets: '10.20.0.0/24' } },
  });
  expect(queued.status).toBe(201);
  commandId = queued.body.commands[0].id;
  await beat(apiX, EDGE, { system_info: { hostname: 'edge-01', ip_addresses: ['10.20.0.1', 'fd00::1'] } });
  await apiX.reportCommandStatus({ command_id: commandId, agent_id: EDGE, status: 'acked' });
  await apiX.reportCommandStatus({
    command_id: commandId,
    agent_id: EDGE,
    status: 'completed',
    exit_code: 0,
    session_id: sessionId,
  });
  const user = await createScopedUser(portal, [clientY]);
  member = { email: user.email, password: user.password };
});

afterAll(async () => {
  await db?.end();
  await browser?.close();
  await portal?.close();
});

const navEntries = (page: Page) =>
  page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents();

async function openAsMember(width: keyof typeof WIDTHS, target: string) {
  const p = await openPage(browser, WIDTHS[width]);
  await signIn(p.page, portal, member, target);
  return p;
}

describe('navigation by permission', () => {
  it.each(['desktop', 'phone'] as const)('an admin sees every section (%s)', async (width) => {
    const p = await openSignedIn(browser, portal, width, '/console/sessions');
    try {
      await poll(() => navEntries(p.page)).toEqual([
        'Overview',
        'Sessions',
        'Findings',
        'What changed',
        'Fleet',
        'Commands',
        'Schedules',
        'Licenses',
        'Users',
        'Webhooks',
        'Audit',
        'Health',
      ]);
      await expectAccessible(p.page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it.each(['desktop', 'phone'] as const)(
    "a business client's user sees only the sections its permissions allow (%s)",
    async (width) => {
      const p = await openAsMember(width, '/console/sessions');
      try {
        await poll(() => navEntries(p.page)).toEqual([
          'Overview',
          'Sessions',
          'Findings',
          'What changed',
          'Commands',
          'Webhooks',
        ]);
        await expectAccessible(p.page);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    },
  );

  it('an address the user may not use shows the plain page, never the section', async () => {
    const p = await openAsMember('phone', '/console/sessions');
    const { page } = p;
    try {
      for (const address of [
        '/console/licenses',
        '/console/users',
        '/console/fleet',
        '/console/audit',
        '/console/health',
      ]) {
        await page.goto(`${portal.url}${address}`);
        await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Not available');
        expect(await page.getByText('This page is not available for your account.').count()).toBe(1);
        expect(await page.locator('main form, main table').count()).toBe(0);
        await expectAccessible(page);
      }
      await screenshot(page, 'not-available.png', { fullPage: true });
      // Nothing was asked of the portal that it would refuse.
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});

describe('the fleet by name', () => {
  it("opens the overview's stale agents filtered, and keeps its filters in the address", async () => {
    const p = await openSignedIn(browser, portal, 'desktop', '/console/overview');
    const { page } = p;
    const address = () => {
      const u = new URL(page.url());
      return `${u.pathname}${u.search}`;
    };
    const agents = () => page.locator('tr[data-agent]').evaluateAll((r) => r.map((x) => x.getAttribute('data-agent')));
    const form = page.getByRole('form', { name: 'Agent filters' });
    try {
      await untilSettled(page);
      // Per client: client X's one stale agent.
      await page.getByRole('link', { name: `1 stale agent of ${clientX}` }).click();
      await poll(address).toBe(`/console/fleet?state=stale&client_id=${clientX}`);
      await poll(agents).toEqual([DB]);
      expect(await form.getByLabel('State').inputValue()).toBe('stale');
      expect(await form.getByLabel('Client id').inputValue()).toBe(clientX);
      await expectAccessible(page);

      // The whole fleet's stale agents, from the fleet health counts.
      await page.goBack();
      await page.locator('section[aria-labelledby="fleet-h"]').getByRole('link', { name: '1 stale agent' }).click();
      await poll(address).toBe('/console/fleet?state=stale');
      await poll(agents).toEqual([DB]);

      // A search is an address of its own; back shows the filters before it, in the form too.
      await form.getByLabel('State').selectOption('');
      await form.getByLabel('Search').fill('branch-01');
      await form.getByRole('button', { name: 'Apply filters' }).click();
      await poll(address).toBe('/console/fleet?q=branch-01');
      await poll(agents).toEqual([OTHER]);
      await page.goBack();
      await poll(address).toBe('/console/fleet?state=stale');
      await poll(agents).toEqual([DB]);
      expect(await form.getByLabel('Search').inputValue()).toBe('');
      expect(await form.getByLabel('State').inputValue()).toBe('stale');

      // Opened directly, with an unknown state left out.
      await page.goto(`${portal.url}/console/fleet?q=edge-01&state=sleeping`);
      await poll(agents).toEqual([EDGE]);
      expect(await form.getByLabel('Search').inputValue()).toBe('edge-01');
      expect(await form.getByLabel('State').inputValue()).toBe('');
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('lists agents by host name and address, with counts, filters and the id in the details', async () => {
    const p = await openSignedIn(browser, portal, 'desktop', `/console/fleet`);
    const { page } = p;
    try {
      const form = page.getByRole('form', { name: 'Agent filters' });
      await form.getByLabel('Client id').fill(clientX);
      await form.getByRole('button', { name: 'Apply filters' }).click();
      await poll(() => page.locator('tr[data-agent]').count()).toBe(2);
      expect(await page.locator('[data-counts]').textContent()).toBe('1 online1 stale1 deregistered');
      const hostCell = (agentId: string) => row(page, 'agent', agentId).locator('th span').allTextContents();
      expect(await hostCell(EDGE)).toEqual(['edge-01', '10.20.0.1, fd00::1']);
      expect(await hostCell(DB)).toEqual(['db-01', '10.20.0.2']);
      expect(await row(page, 'agent', DB).locator('td').nth(1).textContent()).toBe('stale');
      await row(page, 'agent', EDGE).getByRole('button', { name: 'Details of edge-01' }).click();
      expect(await page.locator(`#agent-detail-${EDGE} [data-field="agent-id"]`).textContent()).toBe(EDGE);
      await expectAccessible(page);
      await screenshot(page, 'fleet-by-name.png', { fullPage: true });

      await form.getByLabel('State').selectOption('deregistered');
      await form.getByRole('button', { name: 'Apply filters' }).click();
      await poll(() => page.locator('tr[data-agent]').count()).toBe(1);
      expect(await hostCell(GONE)).toEqual(['old-01']);

      await form.getByLabel('State').selectOption('');
      await form.getByLabel('Client id').fill('');
      await form.getByLabel('Version').fill('4.1.0');
      await form.getByRole('button', { name: 'Apply filters' }).click();
      await poll(() =>
        page.locator('tr[data-agent]').evaluateAll((r) => r.map((x) => x.getAttribute('data-agent'))),
      ).toEqual([DB]);
      expect(await page.locator('[data-counts]').textContent()).toBe('0 online1 stale0 deregistered');
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('names agents in the command picker (by name) and the history at 390 px, stacked rows led by status and state', async () => {
    const p = await openSignedIn(browser, portal, 'phone', '/console/commands');
    const { page } = p;
    try {
      const picker = page.getByRole('form', { name: 'Queue a command' }).getByLabel('Agent', { exact: true });
      await poll(() => picker.locator('option').allTextContents()).toEqual([
        'Choose an agent',
        `branch-01 · 192.168.7.4 (${clientY})`,
        `db-01 · 10.20.0.2 (${clientX}) — stale`,
        `edge-01 · 10.20.0.1 (${clientX})`,
      ]);
      await poll(() => row(page, 'command', commandId).locator('td').nth(1).textContent()).toBe(`edge-01 · ${clientX}`);
      // The history is stacked rows led by the status, without sideways scrolling.
      expect(await firstDrawnLabel(row(page, 'command', commandId))).toBe('Status');
      expect(await noSidewaysScroll(page)).toBe(true);
      await expectAccessible(page);
      // The fleet at 390 px: each agent a stacked row led by its state.
      await page.goto(`${portal.url}/console/fleet`);
      await row(page, 'agent', EDGE).waitFor();
      expect(await firstDrawnLabel(row(page, 'agent', EDGE))).toBe('State');
      expect(await noSidewaysScroll(page)).toBe(true);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});

describe('session links name their client', () => {
  const expectedHref = (clientId: string) => `/collect/?session=${sessionId}&client_id=${clientId}`;

  async function opensClient(page: Page, href: string, clientId: string) {
    await page.locator(`a[href="${href}"]`).first().click();
    await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(`Session ${sessionId}`);
    await poll(() => page.getByText(clientId, { exact: true }).count()).toBeGreaterThan(0);
    expect(await page.getByText('Choose the client:').count()).toBe(0);
  }

  /** For each client: open `address`, do `prepare`, then the link to that client's copy opens it. */
  async function linksPerClient(width: keyof typeof WIDTHS, address: string, prepare: (page: Page) => Promise<void>) {
    for (const clientId of [clientX, clientY]) {
      const p = await openSignedIn(browser, portal, width, address);
      const { page } = p;
      try {
        await prepare(page);
        await poll(() => page.locator(`a[href="${expectedHref(clientId)}"]`).count()).toBeGreaterThan(0);
        await expectAccessible(page);
        await opensClient(page, expectedHref(clientId), clientId);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    }
  }

  it('from the audit log, for each client', () =>
    linksPerClient('desktop', '/console/audit', async (page) => {
      await page.getByLabel('Session id').fill(sessionId);
      await page.getByRole('button', { name: 'Apply filters' }).click();
    }));

  it('from the health page, for each client', () => linksPerClient('phone', '/console/health', async () => {}));

  it("from a command's result, the agent's client", async () => {
    const p = await openSignedIn(browser, portal, 'desktop', '/console/commands');
    const { page } = p;
    try {
      await row(page, 'command', commandId)
        .getByRole('button', { name: `Show command ${commandId}` })
        .click();
      await poll(() => page.locator(`#command-detail a[href="${expectedHref(clientX)}"]`).count()).toBe(1);
      await expectAccessible(page);
      await opensClient(page, expectedHref(clientX), clientX);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
