import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { HeartbeatBody } from '@svc/protocol';
import type pg from 'pg';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalClient, type PortalClient } from '@svc/client/kit';
import { createLicense, createScopedUser, openDb, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { launchChromium } from '@svc/test-support/chromium';
import { portalConf, type SvcdProcess, startSvcd, untilRegistered } from '@svc/test-support/svcd';
import { expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { alert, confirm, notice, openSignedIn, poll, row } from './helpers/console-ui.ts';
import { FLEET_IDLE_POLL_MS } from '../src/fleet/agent-view.ts';
import { screenshot } from '@svc/test-support/screenshots';

/**
 * Fleet and Commands in a real browser against a real portal: a real `svcd` that registers
 * itself and runs a command queued through the form; agents whose states a test must fix
 * (stale for two hours, a given uptime and schedule) registered by heartbeats of the client
 * package's typed portal client; groups, deregister / re-enable / purge.
 */

let portal: TestPortal;
let browser: Browser;
let db: pg.Client;
let agentApi: PortalClient;
let clientId: string;
let sessionId: string;
let daemon: SvcdProcess | undefined;
const ONLINE = 'svcd_0a11ce01';
const STALE = 'svcd_0a11ce02';
const SPARE = 'svcd_0a11ce03';

function heartbeat(agentId: string, extra: Partial<HeartbeatBody> = {}, api = agentApi) {
  return api.heartbeat({
    agent_id: agentId,
    version: '4.2.3',
    timestamp: new Date().toISOString(),
    status: 'running',
    uptime_seconds: 7_380,
    ...extra,
  });
}

beforeAll(async () => {
  portal = await startConsolePortal();
  browser = await launchChromium();
  db = await openDb(portal);
  clientId = uniqueClientId('fleet');
  const { key } = await createLicense(portal, { tier: 'msp', client_id: clientId, name: 'Fleet key' });
  agentApi = createPortalClient({
    target: { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 30 },
  });
  await heartbeat(ONLINE, {
    schedules: [
      {
        config: 'weekly.conf',
        schedule_id: 'weekly',
        last_run: '2026-11-20T02:00:00.000Z',
        last_status: 'success',
        next_run: '2026-11-27T02:00:00.000Z',
        retry_count: 0,
      },
    ],
    system_info: { hostname: 'edge-01', os: 'Debian GNU/Linux 13', cpu_count: 4, memory_total_mb: 3913 },
  });
  await heartbeat(STALE);
  await heartbeat(SPARE);
  // An agent that stopped sending heartbeats two hours ago.
  await db.query(`UPDATE agents SET received_at = received_at - interval '2 hours' WHERE agent_id = $1`, [STALE]);
  sessionId = newSessionId();
  const up = await postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json', sessionId)));
  expect(up.status).toBe(200);
});

afterAll(async () => {
  await daemon?.stop();
  if (daemon !== undefined) await fs.rm(daemon.home, { recursive: true, force: true });
  await db?.end();
  await browser?.close();
  await portal?.close();
});

const open = (width: keyof typeof WIDTHS, target: string) => openSignedIn(browser, portal, width, target);

describe('fleet page', () => {
  it('lists agents with state, age, version, schedules and system info', async () => {
    const p = await open('desktop', '/console/fleet');
    const { page } = p;
    try {
      await poll(() => row(page, 'agent', ONLINE).count()).toBe(1);
      const online = row(page, 'agent', ONLINE);
      expect(await online.locator('td').allInnerTexts()).toEqual([
        clientId,
        'online',
        expect.stringMatching(/^\d+ s ago$/),
        '4.2.3',
        '2 h 3 min',
        '1',
        expect.stringContaining('Details'),
      ]);
      expect(await row(page, 'agent', STALE).locator('td').nth(1).textContent()).toBe('stale');
      expect(await row(page, 'agent', STALE).locator('td').nth(2).textContent()).toBe('2 h ago');
      await online.getByRole('button', { name: 'Details' }).click();
      const detail = page.locator(`#agent-detail-${ONLINE}`);
      expect(await detail.getByRole('table').locator('tbody td').allInnerTexts()).toEqual([
        'weekly',
        'local',
        'weekly.conf',
        '2026-11-20 02:00 UTC',
        'success',
        '2026-11-27 02:00 UTC',
        '0',
      ]);
      expect(await detail.locator('dl').last().textContent()).toContain('Debian GNU/Linux 13');
      await expectAccessible(page);
      await screenshot(page, 'fleet.png', { fullPage: true });
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('shows an agent that registers while the page is open, and reads nothing while the tab is hidden', async () => {
    // Its own client: the scoped user's view below counts the first client's agents.
    const arrivals = uniqueClientId('arrivals');
    const { key } = await createLicense(portal, { tier: 'msp', client_id: arrivals, name: 'Arrivals key' });
    const api = createPortalClient({
      target: { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 30 },
    });
    const arrive = (agentId: string) => heartbeat(agentId, {}, api);
    const setShown = (state: 'hidden' | 'visible') =>
      page.evaluate(
        `Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${state}' }); document.dispatchEvent(new Event('visibilitychange'))`,
      );
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const reads: string[] = [];
    // The console lists agents with GET /api/health?agents=true.
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname === '/api/health' && url.searchParams.get('agents') === 'true') reads.push(r.url());
    });
    try {
      // The page's timers, moved on by the test: no wait of half a minute.
      await page.clock.install();
      await signIn(page, portal, undefined, '/console/fleet');
      await poll(() => row(page, 'agent', ONLINE).count()).toBe(1);
      await arrive('svcd_0a11ce04');
      await page.clock.runFor(FLEET_IDLE_POLL_MS);
      await poll(() => row(page, 'agent', 'svcd_0a11ce04').count()).toBe(1);

      await setShown('hidden');
      await arrive('svcd_0a11ce05');
      const before = reads.length;
      await page.clock.runFor(2 * FLEET_IDLE_POLL_MS);
      expect(reads.length).toBe(before);
      // Shown again: read at once, not a period later (the poll gives up long before the clock's next period).
      await setShown('visible');
      await poll(() => row(page, 'agent', 'svcd_0a11ce05').count()).toBe(1);
      expect(reads.length).toBe(before + 1);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('deregisters, re-enables and purges an agent, each confirmed', async () => {
    const p = await open('phone', '/console/fleet');
    const { page } = p;
    try {
      await poll(() => row(page, 'agent', SPARE).count()).toBe(1);
      // Cancel leaves the agent alone.
      await row(page, 'agent', SPARE).getByRole('button', { name: 'Deregister', exact: true }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
      expect(await page.getByRole('alertdialog').count()).toBe(0);
      expect((await heartbeat(SPARE)).success).toBe(true);

      await confirm(page, row(page, 'agent', SPARE), 'Deregister');
      await poll(() => notice(page).textContent()).toBe(`Agent ${SPARE} deregistered`);
      await poll(() => row(page, 'agent', SPARE).count()).toBe(0);
      await poll(() => row(page, 'deregistered', SPARE).count()).toBe(1);
      await expect(heartbeat(SPARE)).rejects.toThrow(/Agent unregistered/);
      await expectAccessible(page);

      await confirm(page, row(page, 'deregistered', SPARE), 'Re-enable');
      await poll(() => row(page, 'agent', SPARE).count()).toBe(1);
      await poll(() => row(page, 'deregistered', SPARE).count()).toBe(0);
      expect((await heartbeat(SPARE)).success).toBe(true);

      await confirm(page, row(page, 'agent', SPARE), 'Deregister');
      await poll(() => row(page, 'deregistered', SPARE).count()).toBe(1);
      await confirm(page, row(page, 'deregistered', SPARE), 'Purge');
      await poll(() => notice(page).textContent()).toBe(`Agent ${SPARE} purged`);
      await poll(() => row(page, 'deregistered', SPARE).count()).toBe(0);
      const stored = await db.query('SELECT 1 FROM agents WHERE agent_id = $1', [SPARE]);
      expect(stored.rowCount).toBe(0);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it("adds an agent to a group, shows the portal's refusal, removes it after confirmation", async () => {
    const p = await open('phone', '/console/fleet');
    const { page } = p;
    try {
      const form = page.getByRole('form', { name: 'Add an agent to a group' });
      await poll(() => form.getByLabel('Agent', { exact: true }).locator('option').count()).toBeGreaterThan(1);
      await form.getByLabel('Agent', { exact: true }).selectOption({ label: `edge-01 (${clientId})` });
      await form.getByLabel('Group name').fill('-bad');
      await form.getByRole('button', { name: 'Add to group' }).click();
      const direct = await http(portal.url, 'POST', '/api/agent-groups', {
        headers: withToken(await portal.adminToken()),
        json: { agent_id: ONLINE, group_name: '-bad', client_id: clientId },
      });
      expect(direct.status).toBe(400);
      await poll(() => alert(page).textContent()).toBe(direct.body.error);

      await form.getByLabel('Group name').fill('edge');
      await form.getByRole('button', { name: 'Add to group' }).click();
      await poll(() => page.locator(`tr[data-group="edge"][data-member="${ONLINE}"]`).count()).toBe(1);
      const groups = await http(portal.url, 'GET', '/api/agent-groups', {
        headers: withToken(await portal.adminToken()),
      });
      expect(groups.body.groups.edge.map((m: { agent_id: string }) => m.agent_id)).toEqual([ONLINE]);
      await expectAccessible(page);
      expectNoConsoleErrors(p, [400]);
    } finally {
      await p.close();
    }
  });
});

describe('a real svcd', () => {
  it('registers by its own heartbeats, shows its host, and runs a command queued from the console', async () => {
    // Its own client: the scoped user's view below counts the first client's agents.
    const svcdClient = uniqueClientId('svcd');
    const { key } = await createLicense(portal, { tier: 'business', client_id: svcdClient, name: 'svcd key' });
    daemon = await startSvcd({
      configs: {
        'a-portal.conf': portalConf(`${portal.url}/api/upload`, key, { CLIENT_ID: svcdClient }),
        // Loaded and reported, not due during the test.
        'yearly.conf': { SCAN_TARGETS: '127.0.0.1', SCAN_CRON: '0 3 1 1 *' },
      },
    });
    const agentId = daemon.agentId;
    await daemon.waitFor(/msg="svcd started"/);
    // "svcd started" comes before its first heartbeat is answered, and the page lists the agents
    // the portal has when it loads: a loaded run once opened it in between.
    await untilRegistered(portal, agentId);

    const p = await open('desktop', '/console/fleet');
    const { page } = p;
    try {
      await poll(() => row(page, 'agent', agentId).count()).toBe(1);
      const cells = await row(page, 'agent', agentId).locator('td').allInnerTexts();
      expect(cells.slice(0, 6)).toEqual([
        svcdClient,
        'online',
        expect.stringMatching(/^\d+ s ago$/),
        JSON.parse(await fs.readFile(path.join(import.meta.dirname, '../../client/package.json'), 'utf8')).version,
        expect.stringMatching(/^\d+ (s|min)$/),
        '1',
      ]);
      await row(page, 'agent', agentId).getByRole('button', { name: 'Details' }).click();
      const detail = page.locator(`#agent-detail-${agentId}`);
      await poll(() => detail.getByRole('table').locator('tbody td').nth(2).textContent()).toBe('yearly.conf');
      expect(await detail.locator('dl').last().textContent()).toContain(os.hostname());

      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Commands' }).click();
      const form = page.getByRole('form', { name: 'Queue a command' });
      // Named by its host; the option's value is the agent itself.
      const choice = JSON.stringify([svcdClient, agentId]);
      await poll(() => form.getByLabel('Agent', { exact: true }).locator(`option[value='${choice}']`).count()).toBe(1);
      const label = await form.getByLabel('Agent', { exact: true }).locator(`option[value='${choice}']`).textContent();
      expect(label?.startsWith(os.hostname())).toBe(true);
      expect(label?.endsWith(`(${svcdClient})`)).toBe(true);
      await form.getByLabel('Agent', { exact: true }).selectOption(choice);
      await form.getByLabel('Command').selectOption('set_log_level');
      await form.getByLabel('Level', { exact: true }).selectOption('debug');
      await form.getByRole('button', { name: 'Queue command' }).click();
      await poll(() => notice(page).textContent()).toMatch(/^Queued 1 command #\d+$/);
      const id = Number((await notice(page).textContent())!.split('#')[1]);
      // The daemon picks it up with its next heartbeat, runs it and reports; the page follows.
      await poll(() => row(page, 'command', id).locator('td').nth(2).textContent()).toBe('completed');
      await row(page, 'command', id)
        .getByRole('button', { name: `Show command ${id}` })
        .click();
      await poll(() => page.locator('#command-detail [data-field="exit-code"]').textContent()).toBe('0');
      await daemon.waitFor(new RegExp(`msg="command ${id} set_log_level completed"`));
      await daemon.waitFor(/ level=debug msg="heartbeat sent"/);
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});

describe('commands page', () => {
  it('checks the payload with the protocol rules before sending', async () => {
    const p = await open('desktop', '/console/commands');
    const { page } = p;
    try {
      const form = page.getByRole('form', { name: 'Queue a command' });
      await poll(() => form.getByLabel('Agent', { exact: true }).locator('option').count()).toBeGreaterThan(1);
      const before = await db.query('SELECT count(*)::int AS n FROM agent_commands');
      await form.getByLabel('Agent', { exact: true }).selectOption({ label: `edge-01 (${clientId})` });
      await form.getByRole('button', { name: 'Queue command' }).click();
      await poll(() => alert(page).textContent()).toBe('run_scan needs targets: no targets were specified');
      await form.getByLabel('Command').selectOption('push_config');
      await form.getByLabel('Setting').selectOption('ALERT_RISK_THRESHOLD');
      expect(await form.getByText('Value must be an integer from 0 to 100 for ALERT_RISK_THRESHOLD').count()).toBe(1);
      await form.getByLabel('Value').fill('101');
      await form.getByRole('button', { name: 'Queue command' }).click();
      await poll(() => alert(page).textContent()).toBe(
        'payload.config_value must be an integer from 0 to 100 for ALERT_RISK_THRESHOLD',
      );
      const after = await db.query('SELECT count(*)::int AS n FROM agent_commands');
      expect(after.rows[0].n).toBe(before.rows[0].n);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('queues run_scan to an agent, follows its status live and shows the result with the session link', async () => {
    const p = await open('desktop', '/console/commands');
    const { page } = p;
    try {
      const form = page.getByRole('form', { name: 'Queue a command' });
      await poll(() => form.getByLabel('Agent', { exact: true }).locator('option').count()).toBeGreaterThan(1);
      await form.getByLabel('Agent', { exact: true }).selectOption({ label: `edge-01 (${clientId})` });
      await form.getByLabel('Targets').fill('10.0.0.5, scanme.test');
      await form.getByLabel('Profile (optional)').fill('quick_recon');
      await form.getByLabel('Priority (0-10)').fill('8');
      await form.getByRole('button', { name: 'Queue command' }).click();
      await poll(() => notice(page).textContent()).toMatch(/^Queued 1 command #\d+$/);
      const id = Number((await notice(page).textContent())!.split('#')[1]);
      const stored = await db.query('SELECT payload, priority FROM agent_commands WHERE id = $1', [id]);
      expect(stored.rows[0]).toEqual({
        payload: { targets: '10.0.0.5,scanme.test', profile: 'quick_recon' },
        priority: 8,
      });
      await poll(() => row(page, 'command', id).locator('td').nth(2).textContent()).toBe('pending');

      // The agent picks it up with its next heartbeat and reports back.
      const delivered = await heartbeat(ONLINE);
      expect(delivered.commands.map((c) => c.id)).toEqual([id]);
      await poll(() => row(page, 'command', id).locator('td').nth(2).textContent()).toBe('sent');
      await row(page, 'command', id)
        .getByRole('button', { name: `Show command ${id}` })
        .click();
      const detail = page.locator('#command-detail');
      await poll(() => detail.getByText('sent', { exact: true }).count()).toBe(1);
      await agentApi.reportCommandStatus({ command_id: id, agent_id: ONLINE, status: 'acked' });
      await poll(() => row(page, 'command', id).locator('td').nth(2).textContent()).toBe('acked');
      // Agents report no progress between acked and the end: the detail shows the time it has run.
      await poll(() => detail.locator('[data-field="elapsed"]').textContent()).toMatch(
        /^running for \d+ s; the agent reports when it ends$/,
      );
      await agentApi.reportCommandStatus({
        command_id: id,
        agent_id: ONLINE,
        status: 'completed',
        exit_code: 0,
        stdout: 'scan finished: 2 hosts',
        stderr: 'warning: slow host',
        session_id: sessionId,
      });
      await poll(() => row(page, 'command', id).locator('td').nth(2).textContent()).toBe('completed');
      await poll(() => detail.locator('[data-field="exit-code"]').textContent()).toBe('0');
      expect(await detail.locator('[data-field="elapsed"]').textContent()).toMatch(/^took \d+ s$/);
      expect(await detail.locator('[data-field="stdout"]').textContent()).toBe('scan finished: 2 hosts');
      expect(await detail.locator('[data-field="stderr"]').textContent()).toBe('warning: slow host');
      expect(await detail.getByRole('link', { name: sessionId }).getAttribute('href')).toBe(
        `/collect/?session=${sessionId}&client_id=${clientId}`,
      );
      await expectAccessible(page);
      await screenshot(page, 'commands.png', { fullPage: true });
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('queues a command to a group and shows a failed result', async () => {
    const p = await open('phone', '/console/commands');
    const { page } = p;
    try {
      const form = page.getByRole('form', { name: 'Queue a command' });
      await form.getByLabel('A group', { exact: true }).check();
      await poll(() => form.getByLabel('Group', { exact: true }).locator('option').count()).toBeGreaterThan(1);
      await form.getByLabel('Group', { exact: true }).selectOption({ label: `edge (${clientId})` });
      await form.getByLabel('Command').selectOption('set_log_level');
      await form.getByLabel('Level', { exact: true }).selectOption('debug');
      await form.getByRole('button', { name: 'Queue command' }).click();
      await poll(() => notice(page).textContent()).toMatch(/^Queued 1 command #\d+$/);
      const id = Number((await notice(page).textContent())!.split('#')[1]);
      await poll(() => row(page, 'command', id).locator('td').nth(1).textContent()).toBe(
        // Its last heartbeat (the run_scan test's) reported no system_info: named by id again.
        `${ONLINE} (group edge) · ${clientId}`,
      );
      const delivered = await heartbeat(ONLINE);
      expect(delivered.commands.map((c) => c.id)).toEqual([id]);
      await agentApi.reportCommandStatus({ command_id: id, agent_id: ONLINE, status: 'acked' });
      await poll(() => row(page, 'command', id).locator('td').nth(2).textContent()).toBe('acked');
      await agentApi.reportCommandStatus({
        command_id: id,
        agent_id: ONLINE,
        status: 'failed',
        exit_code: 3,
        stderr: 'no',
      });
      await poll(() => row(page, 'command', id).locator('td').nth(2).textContent()).toBe('failed');
      await row(page, 'command', id)
        .getByRole('button', { name: `Show command ${id}` })
        .click();
      await poll(() => page.locator('#command-detail [data-field="exit-code"]').textContent()).toBe('3');
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('removes a group member after confirmation', async () => {
    const p = await open('desktop', '/console/fleet');
    const { page } = p;
    try {
      const member = page.locator(`tr[data-group="edge"][data-member="${ONLINE}"]`);
      await poll(() => member.count()).toBe(1);
      await confirm(page, member, 'Remove');
      await poll(() => member.count()).toBe(0);
      const groups = await http(portal.url, 'GET', '/api/agent-groups', {
        headers: withToken(await portal.adminToken()),
      });
      expect(groups.body.groups).toEqual({});
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});

describe("a scoped user's view", () => {
  it("shows only its clients' agents and commands, without the admin-only actions", async () => {
    const other = uniqueClientId('other');
    const { key } = await createLicense(portal, { tier: 'msp', client_id: other, name: 'Other key' });
    const otherApi = createPortalClient({
      target: { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 30 },
    });
    const outsider = 'svcd_0beef001';
    await otherApi.heartbeat({
      agent_id: outsider,
      version: '4.2.3',
      timestamp: new Date().toISOString(),
      status: 'running',
      uptime_seconds: 5,
    });
    const queued = await http(portal.url, 'POST', '/api/agent-commands', {
      headers: withToken(await portal.adminToken()),
      json: { command_type: 'restart', agent_id: outsider, client_id: other, payload: {} },
    });
    expect(queued.status).toBe(201);
    const member = await createScopedUser(portal, [clientId]);

    const p = await openPage(browser, WIDTHS.phone);
    const { page } = p;
    try {
      await signIn(page, portal, { email: member.email, password: member.password }, '/console/fleet');
      await poll(() => row(page, 'agent', ONLINE).count()).toBe(1);
      expect(
        await page.locator('tr[data-agent]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-agent'))),
      ).toEqual([ONLINE, STALE]);
      expect(await page.getByRole('button', { name: 'Deregister' }).count()).toBe(0);
      expect(await page.getByRole('heading', { name: 'Deregistered agents' }).count()).toBe(0);
      await expectAccessible(page);

      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Commands' }).click();
      await poll(() => page.locator('tr[data-command]').count()).toBeGreaterThan(0);
      expect(await page.getByRole('form', { name: 'Queue a command' }).count()).toBe(0);
      const targets = await page.locator('tr[data-command] td:nth-of-type(2)').allTextContents();
      expect(targets.every((t) => t.startsWith(ONLINE))).toBe(true);
      expect(await page.locator(`tr[data-command="${queued.body.commands[0].id}"]`).count()).toBe(0);
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
