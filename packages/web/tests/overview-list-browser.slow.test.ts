import type pg from 'pg';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, heartbeatBody, openDb } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { launchChromium } from '@svc/test-support/chromium';
import { expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { createScopedUser, signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { firstDrawnLabel, noSidewaysScroll, poll } from './helpers/console-ui.ts';
import { screenshot } from '@svc/test-support/screenshots';

/**
 * The overview (the first page after sign-in), the sessions list's search, sort, total, bulk
 * status change and busy sign, and tables as stacked rows on a phone, in a real browser
 * against a real portal, at 1440 px and 390 px, as an admin and as a scoped user.
 */

const DAY_MS = 86_400_000;

/** What the functions run in the page read of a table cell (the tests compile without the DOM's types). */
interface Cell {
  textContent: string | null;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { top: number; left: number };
}
const daysAgo = (d: number) => new Date(Date.now() - d * DAY_MS).toISOString();
const SCOPED = { email: 'beta-viewer@test.local', password: 'beta-viewer-password-0123' };

const entry = (title: string, severity: string, host: string) => ({ title, severity, host, status: 'new' });

interface Planted {
  id: string;
  key: 'acme' | 'beta';
  client: string;
  target: string;
  risk: number;
  grade: string;
  scanned: string;
  remediation?: ReturnType<typeof entry>[];
}

const PLANTED: Planted[] = [
  {
    id: '20260101_000001',
    key: 'acme',
    client: 'Acme Water',
    target: '192.168.10.0/24',
    risk: 72,
    grade: 'D',
    scanned: daysAgo(10),
  },
  {
    id: '20260101_000002',
    key: 'acme',
    client: 'Acme Water',
    target: '192.168.10.0/24',
    risk: 58,
    grade: 'C',
    scanned: daysAgo(5),
    remediation: [
      entry('SMBv1 enabled', 'critical', '192.168.10.5'),
      entry('SMBv1 enabled', 'critical', '192.168.10.6'),
      entry('Weak TLS', 'high', '192.168.10.7'),
    ],
  },
  {
    id: '20260101_000003',
    key: 'acme',
    client: 'Acme Water',
    target: '10.1.0.0/16',
    risk: 35,
    grade: 'B',
    scanned: daysAgo(3),
    remediation: [entry('Weak TLS', 'medium', '10.1.2.3')],
  },
  {
    id: '20260101_000004',
    key: 'beta',
    client: 'Beta Corp',
    target: 'web.beta.example',
    risk: 20,
    grade: 'A',
    scanned: daysAgo(4),
    remediation: [entry('Weak TLS', 'low', '203.0.113.9')],
  },
  {
    id: '20260101_000005',
    key: 'beta',
    client: 'Beta Corp',
    target: 'mail.beta.example',
    risk: 44,
    grade: 'C',
    scanned: daysAgo(2),
  },
];
const [A1, A2, A3, B1, B2] = PLANTED.map((p) => p.id) as [string, string, string, string, string];

describe('overview, sessions list and stacked tables', () => {
  let portal: TestPortal;
  let browser: Browser;
  let admin: string;
  let db: pg.Client;

  beforeAll(async () => {
    portal = await startConsolePortal();
    admin = await portal.adminToken();
    db = await openDb(portal);
    const keys = {
      acme: (await createLicense(portal, { tier: 'msp', client_id: 'acme-co' })).key,
      beta: (await createLicense(portal, { tier: 'professional', client_id: 'beta-co' })).key,
    };
    for (const p of PLANTED) {
      const doc = {
        metadata: { session_id: p.id, client: p.client, target: p.target, finished_at: p.scanned },
        summary: { risk_score: p.risk, risk_grade: p.grade },
        // Each entry's finding: what the portal scores and counts (a session without one keeps its stated score).
        findings: (p.remediation ?? []).map((e, i) => ({
          id: `f-${i}`,
          rule_id: e.title.toLowerCase().replaceAll(' ', '-'),
          title: e.title,
          severity: e.severity,
          host: e.host,
        })),
        remediation: (p.remediation ?? []).map((e, i) => ({ ...e, finding_id: `f-${i}` })),
      };
      const form = new FormData();
      form.append(
        'session_json',
        new Blob([JSON.stringify(doc)], { type: 'application/json' }),
        'session_results.json',
      );
      const res = await fetch(`${portal.url}/api/upload`, {
        method: 'POST',
        headers: withKey(keys[p.key]),
        body: form,
      });
      expect(res.status).toBe(200);
    }
    // Expiring soon: B1 in 3 days (inside the 7-day notice window), the rest after 90 days.
    await db.query(`UPDATE sessions SET expires_at = now() + interval '3 days' WHERE session_id = $1`, [B1]);
    for (const agent of ['acme-agent-1', 'acme-agent-2']) {
      const hb = await http(portal.url, 'POST', '/api/health', {
        headers: withKey(keys.acme),
        json: heartbeatBody(agent),
      });
      expect(hb.status).toBe(200);
    }
    const dereg = await http(portal.url, 'PATCH', '/api/agents', {
      headers: withToken(admin),
      json: { agent_id: 'acme-agent-2', action: 'deregister' },
    });
    expect(dereg.status).toBe(200);
    await createScopedUser(portal, SCOPED.email, SCOPED.password, ['beta-co']);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await db?.end();
    await portal?.close();
  });

  const cellTexts = (table: Locator) =>
    table
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) =>
          Array.from(tr.querySelectorAll(':scope > td, :scope > th') as ArrayLike<Cell>).map((c) =>
            (c.textContent ?? '').trim(),
          ),
        ),
      );
  const sessionRows = (page: Page) => page.locator('main tbody tr[data-session]');
  const listedIds = (page: Page) =>
    sessionRows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-session')));
  const statusOf = async (id: string, clientId: string) =>
    (
      await http(portal.url, 'GET', `/api/sessions?session=${id}&client_id=${clientId}`, {
        headers: withToken(admin),
      })
    ).body.session.status as string;

  /** Computed style of the first element matching `selector` (an expression: the tests compile without the DOM's types). */
  const styleOf = (page: Page, selector: string, property: string, pseudo: string | null = null): Promise<string> =>
    page.evaluate(
      `getComputedStyle(document.querySelector(${JSON.stringify(selector)}), ${JSON.stringify(pseudo)})[${JSON.stringify(property)}]`,
    );

  it.each(Object.entries(WIDTHS))(
    'the overview is the first page for an admin at the %s width, with real numbers',
    async (name, viewport) => {
      const p = await openPage(browser, viewport);
      const { page } = p;
      try {
        await signIn(page, portal, undefined, '/console/');
        await poll(() => new URL(page.url()).pathname).toBe('/console/overview');
        await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
        const fleet = page.locator('section[aria-labelledby="fleet-h"]');
        await poll(() => fleet.locator('dd').allTextContents()).toEqual(['1', '0', '1']);
        expect(await fleet.locator('dt').allTextContents()).toEqual(['Online', 'Stale', 'Deregistered']);
        const top = page.getByRole('group', { name: 'Open findings by frequency' });
        expect(await cellTexts(top)).toEqual([
          ['high', 'Weak TLS', '3', '3'],
          ['critical', 'SMBv1 enabled', '1', '2'],
        ]);
        const expiring = page.getByRole('group', { name: 'Expiring sessions, soonest first' });
        expect(await cellTexts(expiring)).toEqual([
          ['3', B1, 'Beta Corp', 'web.beta.example', expect.stringMatching(/ UTC$/)],
        ]);
        // The chart, with its words for screen readers and its data as a table.
        const chart = page.locator('.risk-chart');
        await poll(() => chart.locator('canvas').count()).toBe(1);
        // One line per target: a client's targets are not mixed into one line.
        expect(await chart.getAttribute('aria-label')).toContain('Acme Water · 192.168.10.0/24: 2 scans, risk 72');
        expect(await chart.getAttribute('aria-label')).toContain('Acme Water · 10.1.0.0/16: 1 scan, risk 42');
        expect(await chart.getAttribute('aria-label')).toContain('Beta Corp · web.beta.example: 1 scan, risk 1');
        await page.getByText('Risk data as a table').click();
        const data = page.getByRole('group', { name: 'Risk by scan' });
        expect((await cellTexts(data)).map((r) => [r[0], r[2], r[3]])).toEqual([
          // Scored by the portal from their findings; the two without findings keep their stated scores.
          ['Acme Water', '10.1.0.0/16', 'C 42'],
          ['Acme Water', '192.168.10.0/24', 'D 72'],
          ['Acme Water', '192.168.10.0/24', 'D 76'],
          ['Beta Corp', 'mail.beta.example', 'C 44'],
          ['Beta Corp', 'web.beta.example', 'A 1'],
        ]);
        // Chart text is at least 11 px: the legend here; the axes are drawn in 12 px (risk-chart.tsx).
        expect(Number.parseFloat(await styleOf(page, '.risk-chart .u-legend', 'fontSize'))).toBeGreaterThanOrEqual(11);
        if (name === 'phone') {
          expect(await noSidewaysScroll(page)).toBe(true);
          expect(await firstDrawnLabel(top.locator('tbody tr').first())).toBe('Severity');
        } else {
          await screenshot(page, 'overview.png', { fullPage: true });
        }
        await expectAccessible(page);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    },
  );

  it.each(Object.entries(WIDTHS))(
    'a scoped user sees only their clients on the overview and the list at the %s width',
    async (name, viewport) => {
      const p = await openPage(browser, viewport);
      const { page } = p;
      try {
        await signIn(page, portal, SCOPED, '/console/');
        await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
        const top = page.getByRole('group', { name: 'Open findings by frequency' });
        await poll(() => top.count()).toBe(1);
        expect(await cellTexts(top)).toEqual([['low', 'Weak TLS', '1', '1']]);
        // No fleet for a professional client's user.
        expect(await page.locator('section[aria-labelledby="fleet-h"]').count()).toBe(0);
        expect(await page.locator('.risk-chart').getAttribute('aria-label')).not.toContain('Acme');
        await expectAccessible(page);

        await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Sessions' }).click();
        await poll(() => listedIds(page)).toEqual([B2, B1]);
        expect(await page.getByRole('status').filter({ hasText: 'Sessions 1–' }).textContent()).toBe(
          'Sessions 1–2 of 2',
        );
        // The client picker's options come from a request of their own.
        await poll(() => page.locator('select[name="client_id"] option').allTextContents()).toEqual([
          'any client',
          'Beta Corp (beta-co)',
        ]);
        await page.getByLabel('Search target or client').fill('WEB.');
        await page.getByRole('button', { name: 'Filter' }).click();
        await poll(() => listedIds(page)).toEqual([B1]);
        if (name === 'phone') {
          expect(await firstDrawnLabel(sessionRows(page).first())).toBe('Risk');
          expect(await noSidewaysScroll(page)).toBe(true);
        }
        await expectAccessible(page);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    },
  );

  it('the list at 1440 px: search, sort by header, total, a busy sign while a page loads, bulk status change', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, '/console/sessions');
      await poll(() => listedIds(page)).toEqual([B2, B1, A3, A2, A1]);
      const total = page.getByRole('status').filter({ hasText: /^Sessions \d/ });
      expect(await total.textContent()).toBe('Sessions 1–5 of 5');

      // Search is a case-insensitive part of target or client.
      await page.getByLabel('Search target or client').fill('192.168');
      await page.getByRole('button', { name: 'Filter' }).click();
      await poll(() => listedIds(page)).toEqual([A2, A1]);
      expect(await total.textContent()).toBe('Sessions 1–2 of 2');
      await page.getByLabel('Search target or client').fill('acme WATER');
      await page.getByRole('button', { name: 'Filter' }).click();
      await poll(() => listedIds(page)).toEqual([A3, A2, A1]);

      // Sort by a heading: highest risk first, then lowest.
      await page.getByRole('button', { name: 'Clear' }).click();
      await poll(() => listedIds(page)).toEqual([B2, B1, A3, A2, A1]);
      await page.getByRole('button', { name: 'Risk', exact: true }).click();
      await poll(() => listedIds(page)).toEqual([A2, A1, B2, A3, B1]);
      const riskHeader = page.locator('th', { has: page.getByRole('button', { name: 'Risk', exact: true }) });
      expect(await riskHeader.getAttribute('aria-sort')).toBe('descending');
      await page.getByRole('button', { name: 'Risk', exact: true }).click();
      await poll(() => listedIds(page)).toEqual([B1, A3, B2, A1, A2]);
      expect(await riskHeader.getAttribute('aria-sort')).toBe('ascending');
      await page.getByRole('button', { name: 'Target', exact: true }).click();
      await poll(() => listedIds(page)).toEqual([A3, A1, A2, B2, B1]);

      // While the next page loads, the old one stays, marked busy.
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      await page.route(
        (url) => url.pathname === '/api/sessions' && url.searchParams.get('q') === 'beta',
        async (route) => {
          await held;
          await route.continue();
        },
      );
      await page.getByLabel('Search target or client').fill('beta');
      await page.getByRole('button', { name: 'Filter' }).click();
      const table = page.getByRole('group', { name: 'Sessions', exact: true });
      await poll(() => table.getAttribute('aria-busy')).toBe('true');
      expect(await page.locator('.list-status').textContent()).toBe('Loading…');
      expect(await listedIds(page)).toEqual([A3, A1, A2, B2, B1]);
      await expectAccessible(page);
      release();
      await poll(() => listedIds(page)).toEqual([B2, B1]);
      expect(await table.getAttribute('aria-busy')).toBeNull();

      // Bulk: two selected sessions to resolved, one PATCH each; the portal has both.
      await page.getByLabel(`Select session ${B1}`).check();
      await page.getByLabel(`Select session ${B2}`).check();
      await poll(() => page.getByText('2 sessions selected').isVisible()).toBe(true);
      await page.getByLabel('New status').selectOption('resolved');
      await page.getByRole('button', { name: 'Change status' }).click();
      await poll(() => page.getByText('2 of 2 sessions set to resolved.').isVisible()).toBe(true);
      expect(await statusOf(B1, 'beta-co')).toBe('resolved');
      expect(await statusOf(B2, 'beta-co')).toBe('resolved');
      expect(await statusOf(A1, 'acme-co')).toBe('new');
      await poll(() =>
        sessionRows(page).evaluateAll((trs) => trs.map((tr) => tr.querySelector('.badge')?.textContent)),
      ).toEqual(['resolved', 'resolved']);
      await screenshot(page, 'sessions-list.png', { fullPage: true });
      await expectAccessible(page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('at 390 px the list and the admin tables are stacked rows led by risk, status or state', async () => {
    const p = await openPage(browser, WIDTHS.phone);
    const { page } = p;
    try {
      await signIn(page, portal, undefined, '/console/sessions');
      await poll(() => sessionRows(page).count()).toBe(5);
      const first = sessionRows(page).first();
      expect(await firstDrawnLabel(first)).toBe('Risk');
      // Each value carries its column's name; no sideways scrolling.
      expect(await styleOf(page, 'main tbody tr[data-session] td[data-label="Target"]', 'content', '::before')).toBe(
        '"Target"',
      );
      expect(await noSidewaysScroll(page)).toBe(true);
      await screenshot(page, 'sessions-list-phone.png', { fullPage: true });
      // Sorting without the headings: the form's choice.
      await page.getByLabel('Sort by').selectOption('risk_score:desc');
      await page.getByRole('button', { name: 'Filter' }).click();
      await poll(() => listedIds(page)).toEqual([A2, A1, B2, A3, B1]);
      await expectAccessible(page);

      for (const [address, lead] of [
        ['/console/audit', 'Event'],
        ['/console/users', 'Role'],
        ['/console/licenses', 'Status'],
      ] as const) {
        await page.goto(`${portal.url}${address}`);
        const row = page.locator('main table tbody tr').first();
        await row.waitFor();
        await poll(() => firstDrawnLabel(row)).toBe(lead);
        expect(await noSidewaysScroll(page), address).toBe(true);
        await expectAccessible(page);
      }
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
