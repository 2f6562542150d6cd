import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '@svc/test-support/chromium';
import { createLicense, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { formatScore } from '../src/ui/format.ts';
import { loadFixture, postUpload, sessionParts } from '@svc/test-support/upload';
import { expectAccessible, expectNoConsoleErrors, openPage, untilSettled, WIDTHS } from './helpers/browser.ts';
import { createScopedUser, signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { firstDrawnLabel, noSidewaysScroll, poll } from './helpers/console-ui.ts';
import { screenshot } from '@svc/test-support/screenshots';

/**
 * The session view's panels for daily triage, at both widths, as the admin and as a scoped
 * user, in the light and the dark theme (axe on each): the share link rotated and revoked
 * from the page, the benchmark without peers and with its age, the topology of 254 hosts by
 * subnet and zoomable, the trend in scan order with text drawn at its real size, and a
 * retry where a load failed.
 */

/** What the tests read of an element's layout (the tests are typed without the DOM library). */
type Box = { getBoundingClientRect(): { width: number; height: number }; clientWidth: number };
/** The page's background and colour scheme, evaluated in the page. */
const ROOT_COLOURS =
  '({ bg: getComputedStyle(document.documentElement).backgroundColor, scheme: getComputedStyle(document.documentElement).colorScheme })';

const MEMBER = { email: 'panels-member@test.local', password: 'Panels-member-password-0123!' };

/**
 * `hosts` hosts in a /24 and a small second subnet. The topology test's session has 254 (what
 * the issue found unreadable); the others a few, so the views every other test opens (and axe
 * reads) stay small.
 */
function topologyOf(hosts: number) {
  const nodes = [];
  const grades = ['A', 'B', 'C', 'D', 'F'];
  for (let i = 1; i <= hosts; i++)
    nodes.push({
      ip: `10.30.1.${i}`,
      hostname: `host-${i}`,
      port_count: i % 7,
      risk_score: (i * 13) % 100,
      risk_grade: grades[i % 5],
      subnet: '10.30.1.0/24',
    });
  for (let i = 1; i <= 6; i++)
    nodes.push({ ip: `10.30.2.${i * 10}`, port_count: 1, risk_score: 20, risk_grade: 'B', subnet: '10.30.2.0/24' });
  return { nodes, links: [], subnets: [] };
}

/**
 * Scan times differ from upload order: uploaded March 10, then March 1, then March 5. The
 * id's time is the scan's end, as the file's finished_at.
 */
const SCANS = [
  { id: '20250310_093000', finished: '2025-03-10T09:30:00Z', risk: 30 },
  { id: '20250301_093000', finished: '2025-03-01T09:30:00Z', risk: 70 },
  { id: '20250305_093000', finished: '2025-03-05T09:30:00Z', risk: 50 },
] as const;
/** A scan of another target of the same client, with the topology of 254 hosts. */
const TOPOLOGY_SCAN = { id: '20250311_093000', finished: '2025-03-11T09:30:00Z', risk: 40 } as const;

describe('session view panels', () => {
  let portal: TestPortal;
  let browser: Browser;
  const clientId = uniqueClientId('panels');
  const target = '10.30.0.0/16';
  /** The session the tests open: the target's latest scan (the topology test opens TOPOLOGY_SCAN). */
  const current = SCANS[0].id;
  const viewUrl = (session: string = current) => `/collect/?session=${session}&client_id=${clientId}`;

  beforeAll(async () => {
    portal = await startConsolePortal();
    browser = await launchChromium();
    const key = (await createLicense(portal, { tier: 'business', client_id: clientId })).key;
    const scans = [
      ...SCANS.map((scan) => ({ scan, of: target, hosts: 8 })),
      { scan: TOPOLOGY_SCAN, of: '10.40.0.0/16', hosts: 254 },
    ];
    for (const { scan, of, hosts } of scans) {
      const doc = loadFixture('session-complete.json');
      doc['metadata'] = {
        ...doc['metadata'],
        session_id: scan.id,
        target: of,
        client_id: clientId,
        started_at: scan.finished.replace('09:30', '09:00'),
        finished_at: scan.finished,
      };
      doc['summary'] = { ...doc['summary'], risk_score: scan.risk, total_hosts: hosts + 6 };
      doc['topology'] = topologyOf(hosts);
      const res = await postUpload(portal.url, key, sessionParts(doc, { report: '<html><body>r</body></html>' }));
      if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    }
    await createScopedUser(portal, MEMBER.email, MEMBER.password, [clientId]);
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  const section = (page: Page, id: string) => page.locator(`section[aria-labelledby="${id}-h"]`);

  async function openView(
    width: keyof typeof WIDTHS,
    who: 'admin' | 'member',
    colorScheme: 'light' | 'dark' = 'light',
    session: string = current,
  ) {
    const p = await openPage(browser, WIDTHS[width]);
    await p.page.emulateMedia({ colorScheme });
    await signIn(p.page, portal, who === 'admin' ? undefined : MEMBER, viewUrl(session));
    await poll(() => section(p.page, 'benchmark').locator('table').count()).toBe(1);
    await untilSettled(p.page);
    return p;
  }

  it("the portal's answer on access mounts nothing afresh: a member's session view loads once", async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const benchmarks: string[] = [];
    p.page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/benchmark') benchmarks.push(r.url());
    });
    // The answer on access is held until the view has loaded, then let through.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await p.page.route('**/api/me', async (route) => {
      await held;
      await route.continue();
    });
    try {
      await signIn(p.page, portal, MEMBER, viewUrl());
      await poll(() => section(p.page, 'benchmark').getByText('No peers yet', { exact: true }).count()).toBe(3);
      await p.page.locator('main h1').evaluate((h) => h.setAttribute('data-mounted', 'before'));
      release();
      // The business member's sections show once the answer is applied ...
      const nav = p.page.getByRole('navigation', { name: 'Sections' });
      await poll(() => nav.getByRole('link', { name: 'Commands' }).count()).toBe(1);
      // ... in the same render that would have mounted the view afresh: its heading is the same node.
      expect(await p.page.locator('main h1').getAttribute('data-mounted')).toBe('before');
      expect(benchmarks).toHaveLength(1);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it("at 390 px the panels' tables are stacked rows led by what says the most; the page never scrolls sideways", async () => {
    const p = await openView('phone', 'admin');
    try {
      const first = (name: string) => section(p.page, name).locator('tbody tr').first();
      expect(await firstDrawnLabel(first('benchmark'))).toBe('Metric');
      await section(p.page, 'trend').getByText('Trend as a table').click();
      expect(await firstDrawnLabel(first('trend'))).toBe('Risk score');
      await section(p.page, 'topology').getByText('Subnets and hosts as tables').click();
      const hosts = p.page.getByRole('group', { name: 'Hosts', exact: true }).locator('tbody tr').first();
      expect(await firstDrawnLabel(hosts)).toBe('Grade');
      expect(await noSidewaysScroll(p.page)).toBe(true);
      await expectAccessible(p.page);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  describe.each(['desktop', 'phone'] as const)('at the %s width', (width) => {
    it.each(['admin', 'member'] as const)(
      'the benchmark says there are no peers yet and how old it is (%s)',
      async (who) => {
        const p = await openView(width, who);
        try {
          const bench = section(p.page, 'benchmark');
          // The only client: no percentile is drawn, the reason is given instead.
          expect(await bench.locator('meter').count()).toBe(0);
          expect(await bench.getByText('No peers yet', { exact: true }).count()).toBe(3);
          expect(await bench.textContent()).toContain('There are no peers yet');
          const age = bench.locator('.benchmark-age time');
          expect(await age.getAttribute('datetime')).toMatch(/^\d{4}-\d{2}-\d{2}T/);
          expect(await bench.locator('.benchmark-age').textContent()).toMatch(/\(\d+ (s|min) ago\)/);
          await expectAccessible(p.page);
          expectNoConsoleErrors(p);
        } finally {
          await p.close();
        }
      },
    );

    it('the trend is in scan order, drawn at the size it is shown (text 12 px)', async () => {
      const p = await openView(width, 'admin');
      try {
        const trend = section(p.page, 'trend');
        await trend.getByText('Trend as a table').click();
        const ids = await trend.locator('tbody tr td:first-child').allTextContents();
        expect(ids).toEqual(['20250301_093000', '20250305_093000', '20250310_093000']);
        expect(await trend.locator('figcaption').textContent()).toContain('By scan time');
        const canvas = trend.locator('.trend-chart canvas').first();
        await poll(() => canvas.count()).toBe(1);
        // One canvas pixel per CSS pixel (times the device ratio): the 12 px axis text is not scaled down.
        const fit = await canvas.evaluate((c) => {
          const el = c as unknown as Box & { width: number; closest(selector: string): Box };
          const ratio = (globalThis as unknown as { devicePixelRatio: number }).devicePixelRatio;
          return {
            css: el.getBoundingClientRect().width,
            drawn: el.width / ratio,
            box: el.closest('.trend-chart').clientWidth,
          };
        });
        expect(Math.abs(fit.css - fit.drawn)).toBeLessThan(1);
        expect(Math.abs(fit.css - fit.box)).toBeLessThan(2);
        // The scores are the current triage's (docs/findings-of-record.md#one-set-of-numbers), as the portal states them.
        const score = async (id: string) =>
          (
            await http(portal.url, 'GET', `/api/sessions?session=${id}&client_id=${clientId}`, {
              headers: withToken(await portal.adminToken()),
            })
          ).body.session.risk_score as number;
        const [first, last] = [await score('20250301_093000'), await score('20250310_093000')];
        expect(await trend.locator('[role="img"]').getAttribute('aria-label')).toBe(
          `Risk score over 3 scans, from ${formatScore(first)} on 2025-03-01 09:30 UTC to ${formatScore(last)} on 2025-03-10 09:30 UTC`,
        );
        await expectAccessible(p.page);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });

    it('the topology of 254 hosts is grouped by subnet and zooms by button, keyboard and Ctrl + wheel', async () => {
      const p = await openView(width, 'admin', 'light', TOPOLOGY_SCAN.id);
      try {
        const topo = section(p.page, 'topology');
        const svg = topo.locator('.topo-viewport svg');
        // The view counts as open once the benchmark is drawn; the topology comes with the
        // session's blocks, a request of its own.
        await poll(() => topo.locator('.topo-subnet-label').allTextContents()).toEqual([
          '10.30.1.0/24 · 254 hosts · average risk 49.6',
          '10.30.2.0/24 · 6 hosts · average risk 20',
        ]);
        expect(await topo.locator('rect.topo-host').count()).toBe(260);
        const zoom = topo.getByLabel('Zoom level');
        expect(await zoom.textContent()).toBe('100 %');
        // At 100 % a host label is 12 CSS pixels, whatever the width of the screen.
        const labelPx = () =>
          topo
            .locator('.topo-host-label')
            .first()
            .evaluate((t) => (t as unknown as Box).getBoundingClientRect().height);
        expect(await labelPx()).toBeGreaterThanOrEqual(11);
        if (width === 'desktop') {
          await screenshot(topo.locator('.topo-viewport'), 'topology-254.png');
        }
        const widthOf = () => svg.evaluate((s) => (s as unknown as Box).getBoundingClientRect().width);
        const natural = await widthOf();

        await topo.getByRole('button', { name: 'Zoom in' }).click();
        expect(await zoom.textContent()).toBe('150 %');
        expect(Math.round(await widthOf())).toBe(Math.round(natural * 1.5));
        await topo.getByRole('button', { name: 'Zoom out' }).click();
        await topo.getByRole('button', { name: 'Zoom out' }).click();
        expect(await zoom.textContent()).toBe('75 %');

        await topo.locator('.topo-viewport').focus();
        await p.page.keyboard.press('+');
        expect(await zoom.textContent()).toBe('100 %');

        await topo.locator('.topo-viewport').hover();
        await p.page.keyboard.down('Control');
        await p.page.mouse.wheel(0, -100);
        await p.page.keyboard.up('Control');
        await poll(() => zoom.textContent()).toBe('150 %');

        await topo.getByRole('button', { name: 'Fit' }).click();
        const fitted = await widthOf();
        const box = await topo.locator('.topo-viewport').evaluate((v) => (v as unknown as Box).clientWidth);
        expect(fitted).toBeLessThanOrEqual(box + 1);

        await topo.getByText('Subnets and hosts as tables').click();
        expect(await topo.getByRole('group', { name: 'Hosts' }).locator('tbody tr').count()).toBe(260);
        await expectAccessible(p.page);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });

    it.each(['admin', 'member'] as const)('rotates and revokes the share link from the page (%s)', async (who) => {
      const p = await openView(width, who);
      try {
        const files = section(p.page, 'files');
        const link = files.locator('#share-url');
        const before = await link.inputValue();
        const tokenOf = (url: string) => new URL(url).searchParams.get('token') ?? '';
        const shareStatus = async (url: string) =>
          (await fetch(`${portal.url}/api/share?token=${tokenOf(url)}`)).status;
        expect(await shareStatus(before)).toBe(200);

        await files.getByRole('button', { name: 'Rotate link' }).click();
        await expectAccessible(p.page);
        await files.getByRole('alertdialog').getByRole('button', { name: 'Make a new link' }).click();
        await poll(() => link.inputValue()).not.toBe(before);
        const rotated = await link.inputValue();
        expect(await files.getByRole('status').textContent()).toBe(
          'A new share link was made; the old one no longer works.',
        );
        expect(await shareStatus(before)).toBe(404);
        expect(await shareStatus(rotated)).toBe(200);
        // The report frame follows the new link.
        expect(await p.page.locator('iframe.report-frame').getAttribute('src')).toContain(tokenOf(rotated));

        await files.getByRole('button', { name: 'Revoke link' }).click();
        await files.getByRole('alertdialog').getByRole('button', { name: 'Revoke the link' }).click();
        await poll(() => files.getByRole('button', { name: 'Create a new share link' }).isVisible()).toBe(true);
        expect(await files.textContent()).toContain('This session has no share link: it was revoked.');
        expect(await shareStatus(rotated)).toBe(404);
        await expectAccessible(p.page);

        await files.getByRole('button', { name: 'Create a new share link' }).click();
        await poll(() => link.count()).toBe(1);
        expect(await shareStatus(await link.inputValue())).toBe(200);
        expectNoConsoleErrors(p);
      } finally {
        await p.close();
      }
    });

    it('a failed load offers to try again, and the retry loads it', async () => {
      const p = await openPage(browser, WIDTHS[width]);
      try {
        // The network drops the first benchmark request (the portal itself is untouched).
        let dropped = 0;
        await p.page.route('**/api/benchmark?*', (route) => {
          if (dropped++ === 0) return route.abort('connectionreset');
          return route.continue();
        });
        await signIn(p.page, portal, undefined, viewUrl());
        const bench = section(p.page, 'benchmark');
        await poll(() => bench.getByRole('alert').isVisible()).toBe(true);
        expect(await bench.getByRole('alert').textContent()).toBe('The portal cannot be reached');
        await expectAccessible(p.page);
        await bench.getByRole('button', { name: 'Try again' }).click();
        await poll(() => bench.locator('table').count()).toBe(1);
        expect(await bench.getByRole('alert').count()).toBe(0);
        expect(dropped).toBe(2);
        // The dropped request is the one error the browser logs.
        expect(p.errors.filter((e) => !e.includes('ERR_CONNECTION_RESET'))).toEqual([]);
      } finally {
        await p.close();
      }
    });

    it.each(['admin', 'member'] as const)(
      'the dark theme follows the system setting and stays accessible (%s)',
      async (who) => {
        const p = await openView(width, who, 'dark');
        try {
          const colours = await p.page.evaluate(ROOT_COLOURS);
          expect(colours).toEqual({ bg: 'rgb(18, 20, 26)', scheme: 'dark' });
          await section(p.page, 'topology').getByText('Subnets and hosts as tables').click();
          await section(p.page, 'trend').getByText('Trend as a table').click();
          await expectAccessible(p.page);
          if (width === 'desktop') {
            await screenshot(p.page, `session-dark-${who}.png`);
          }
          await p.page.goto(`${portal.url}/console/sessions`);
          await poll(() => p.page.getByRole('heading', { level: 1 }).textContent()).toBe('Sessions');
          await poll(() => p.page.locator('main table').count()).toBeGreaterThan(0);
          await expectAccessible(p.page);
          if (who === 'admin') {
            await p.page.goto(`${portal.url}/console/licenses`);
            await poll(() => p.page.locator('main table').count()).toBeGreaterThan(0);
            await expectAccessible(p.page);
          }
          // Back to light: the page follows at once.
          await p.page.emulateMedia({ colorScheme: 'light' });
          expect(await p.page.evaluate(ROOT_COLOURS)).toEqual({ bg: 'rgb(246, 247, 249)', scheme: 'light' });
          expectNoConsoleErrors(p);
        } finally {
          await p.close();
        }
      },
    );
  });
});
