import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brandingFromEnv, renderExecSummary, renderReport } from '../src/report/index.ts';
import { launchChromium } from '@svc/test-support/chromium';
import { pixelOf } from './helpers/chromium.ts';
import { SCREENSHOT_DIR, screenshotsWanted } from '@svc/test-support/screenshots';
import { HOSTILE_EVIDENCE, HOSTILE_TITLE, reportSession } from '@svc/test-support/report-session';

/**
 * Both HTML files of a pipeline-made session opened from disk in Chromium: nothing fails,
 * nothing is fetched, the hostile evidence stays text, the white-label colors are the ones
 * on screen, and the closing body tag inside the script's string leaves the document whole.
 * With SCREENSHOTS=1 the rendering is kept as test-output/screenshots/report-screenshot.png.
 */

const BRAND = {
  REPORT_PRIMARY_COLOR: '#2e86de',
  REPORT_HEADER_BG: '#0a3d62',
  REPORT_HEADER_TEXT: '#fdf6e3',
  REPORT_SUBTITLE: 'Blue Harbor Security',
  REPORT_FOOTER_TEXT: 'Prepared for ACME Corp by Blue Harbor Security.',
  REPORT_FOOTER_EMAIL: 'consult@blueharbor.example',
  REPORT_FOOTER_URL: 'https://blueharbor.example/',
  COMPANY_LOGO: 'logo.svg',
};
const LOGO = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><rect width="120" height="40" rx="6" fill="#f6b93b"/><text x="60" y="26" font-size="16" text-anchor="middle" font-family="sans-serif">BLUE HARBOR</text></svg>',
);
const SECTIONS = [
  'scope',
  'risk',
  'trend',
  'top-risks',
  'findings',
  'hosts',
  'remediation',
  'exceptions',
  'compliance',
  'orc-964',
  'topology',
  'consultation-section',
];

interface Watched {
  page: Page;
  problems: string[];
  requests: string[];
  dialogs: string[];
}

describe('report and executive summary in Chromium', () => {
  let browser: Browser | undefined;
  let dir = '';
  const files = { report: '', exec: '', plainReport: '', triagedExec: '' };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-report-'));
    const { doc, trend } = reportSession();
    const branding = brandingFromEnv(BRAND, (f) => (f === 'logo.svg' ? LOGO : Buffer.alloc(0)));
    const plain = brandingFromEnv({}, () => Buffer.alloc(0));
    files.report = path.join(dir, 'report_acme.html');
    files.exec = path.join(dir, 'exec_summary_acme.html');
    files.plainReport = path.join(dir, 'report_plain.html');
    await fs.writeFile(files.report, renderReport({ doc, trend, branding }));
    await fs.writeFile(files.exec, renderExecSummary({ doc, trend, branding }));
    await fs.writeFile(files.plainReport, renderReport({ doc, trend, branding: plain }));
    // The executive summary's longest form: false positives and findings not checked counted apart too.
    files.triagedExec = path.join(dir, 'exec_summary_triaged.html');
    const triaged = {
      ...doc,
      remediation: (doc.remediation ?? []).map((e, i) =>
        i === 0 ? { ...e, disposition: 'false_positive' as const } : e,
      ),
      remediation_not_checked: [{ title: 'Redis without a password', severity: 'high' as const, host: '10.0.3.4' }],
    };
    await fs.writeFile(files.triagedExec, renderExecSummary({ doc: triaged, trend, branding }));
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  async function open(file: string): Promise<Watched> {
    if (browser === undefined) throw new Error('Chromium did not start (see beforeAll)');
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const w: Watched = { page, problems: [], requests: [], dialogs: [] };
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') w.problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => w.problems.push(`pageerror: ${e.message}`));
    page.on('requestfailed', (r) => w.problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('request', (r) => w.requests.push(r.url()));
    page.on('dialog', (d) => {
      w.dialogs.push(d.message());
      void d.dismiss();
    });
    const res = await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    expect(res?.ok()).toBe(true);
    return w;
  }

  /**
   * After `load`, the page's task queue once more: a frame is rendered, the fonts are settled and
   * a task queued behind everything the load queued has run. Whatever the page does on its own
   * after loading (a timer, a late script, a dialog) has had its turn, and the protocol's events
   * are ordered, so what it logged is in `problems` when this resolves.
   */
  async function settled(page: Page): Promise<void> {
    await page.evaluate(
      'document.fonts.ready.then(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))))',
    );
  }

  async function colorAt(page: Page, x: number, y: number): Promise<string> {
    return pixelOf(await page.screenshot({ clip: { x, y, width: 1, height: 1 } }));
  }

  /** A point inside an element, `dx`/`dy` from its top left corner (negative: from the bottom right). */
  async function pointIn(page: Page, selector: string, dx: number, dy: number): Promise<[number, number]> {
    const box = await page.locator(selector).boundingBox();
    if (box === null) throw new Error(`${selector} is not visible`);
    return [
      Math.floor(dx < 0 ? box.x + box.width + dx : box.x + dx),
      Math.floor(dy < 0 ? box.y + box.height + dy : box.y + dy),
    ];
  }

  for (const kind of ['report', 'exec'] as const) {
    it(`${kind}: loads with no console error, no failed or external request, and no dialog`, async () => {
      const w = await open(files[kind]);
      await settled(w.page);
      expect(w.problems).toEqual([]);
      expect(w.dialogs).toEqual([]);
      // The document itself and the embedded logo; nothing from any server.
      expect(w.requests.filter((u) => !u.startsWith('data:'))).toEqual([pathToFileURL(files[kind]).href]);
      expect(await w.page.evaluate('[...document.images].map((i) => i.complete && i.naturalWidth)')).toEqual([120]);
      await w.page.close();
    });

    it(`${kind}: is parsed whole: the closing body tag in the script's string ends nothing`, async () => {
      const w = await open(files[kind]);
      // Browser-side code as a string: the tests compile without the DOM library.
      const dom = (await w.page.evaluate(`({
        scripts: document.scripts.length,
        lastIsScript: document.body.lastElementChild?.tagName,
        scriptHasBodyTag: (document.scripts[0]?.textContent ?? '').includes("'</body></html>'"),
        footerBeforeScript: document.body.lastElementChild?.previousElementSibling?.tagName,
        bodyChildren: [...document.body.children].map((e) => e.tagName),
        copy: window.svcReport.printableCopy(),
        consultation: document.querySelectorAll('#consultation-section.consultation-section > #scheduleBtn').length,
      })`)) as { copy: string };
      expect(dom).toMatchObject({
        scripts: 1,
        lastIsScript: 'SCRIPT',
        scriptHasBodyTag: true,
        footerBeforeScript: 'FOOTER',
        bodyChildren: ['HEADER', 'MAIN', 'FOOTER', 'SCRIPT'],
        consultation: 1,
      });
      expect(dom.copy.startsWith('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>')).toBe(true);
      expect(dom.copy.endsWith('</main></body></html>')).toBe(true);
      expect(dom.copy).not.toContain('<script');
      await w.page.close();
    });

    it(`${kind}: shows the white-label colors on screen`, async () => {
      const w = await open(files[kind]);
      const page = w.page;
      expect(await colorAt(page, ...(await pointIn(page, 'header.report-header', 4, 4)))).toBe(BRAND.REPORT_HEADER_BG);
      // The primary color: the underline of a section heading, and the consultation button.
      expect(await colorAt(page, ...(await pointIn(page, '#scope h2', 20, -2)))).toBe(BRAND.REPORT_PRIMARY_COLOR);
      await page.locator('#scheduleBtn').scrollIntoViewIfNeeded();
      expect(await colorAt(page, ...(await pointIn(page, '#scheduleBtn', 5, 5)))).toBe(BRAND.REPORT_PRIMARY_COLOR);
      expect(await page.evaluate(`getComputedStyle(document.querySelector('header.report-header h1')).color`)).toBe(
        'rgb(253, 246, 227)',
      );
      expect(await page.locator('header .subtitle').textContent()).toBe('Blue Harbor Security');
      expect(await page.locator('footer').textContent()).toContain('Prepared for ACME Corp by Blue Harbor Security.');
      expect(await page.locator('#scheduleBtn').getAttribute('data-contact')).toBe('mailto:consult@blueharbor.example');
      await page.close();
    });
  }

  it('uses the default colors without configuration', async () => {
    const w = await open(files.plainReport);
    expect(await colorAt(w.page, ...(await pointIn(w.page, 'header.report-header', 4, 4)))).toBe('#1a1a2e');
    expect(await colorAt(w.page, ...(await pointIn(w.page, '#scope h2', 20, -2)))).toBe('#dc3545');
    expect(w.problems).toEqual([]);
    await w.page.close();
  });

  it('shows hostile evidence and titles as text: nothing in them runs', async () => {
    const w = await open(files.report);
    await settled(w.page);
    expect(w.dialogs).toEqual([]);
    const evidence = w.page.locator('pre.evidence', { hasText: '<script>alert(1)</script>' });
    expect(await evidence.count()).toBe(1);
    expect(await evidence.textContent()).toBe(HOSTILE_EVIDENCE);
    expect(await evidence.isVisible()).toBe(true);
    expect(await w.page.locator('#findings h3', { hasText: HOSTILE_TITLE }).count()).toBe(1);
    expect(await w.page.locator('b').count()).toBe(0);
    expect(await w.page.locator('img').count()).toBe(1);
    expect(await w.page.locator('script').count()).toBe(1);
    await w.page.close();
  });

  it('has every section, and a trend chart that is an accessible image', async () => {
    const w = await open(files.report);
    for (const id of SECTIONS) expect(await w.page.locator(`#${id}`).count(), id).toBe(1);
    const chart = w.page.getByRole('img', { name: 'Risk score trend for 10.0.0.0/16' });
    expect(await chart.count()).toBe(1);
    expect(await chart.locator('circle').count()).toBe(3);
    const box = await chart.boundingBox();
    expect(box?.width).toBeGreaterThan(300);
    await w.page.close();
  });

  it.each([
    ['', 'exec'],
    [' with false positives and findings not checked counted apart', 'triagedExec'],
  ] as const)('prints the executive summary on one page%s', async (_label, file) => {
    const w = await open(files[file]);
    for (const format of ['A4', 'Letter'] as const) {
      const pdf = (await w.page.pdf({ format, printBackground: true })).toString('latin1');
      expect(pdf.match(/\/Type\s*\/Page\b/g), format).toHaveLength(1);
    }
    await w.page.close();
  });

  it('renders the report to a screenshot', async () => {
    const w = await open(files.report);
    const png = await w.page.screenshot({ fullPage: true, clip: { x: 0, y: 0, width: 1100, height: 1500 } });
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1100, 1500]);
    if (screenshotsWanted()) {
      await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
      await fs.writeFile(path.join(SCREENSHOT_DIR, 'report-screenshot.png'), png);
    }
    await w.page.close();
  });
});
