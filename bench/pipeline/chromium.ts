import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { median, round } from '../lib/stats.ts';

/**
 * Opens a report in Debian's chromium (never a downloaded browser) the way the report tests
 * do, and records how long it takes to load: navigation to the `load` event, then the first
 * paint of the page the way a reader sees it (a frame after load). Not asserted: the figures
 * say whether a 10,000-finding report is still usable.
 */

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface ChromiumLoad {
  /** Median over the runs, ms. */
  loadMs: number;
  runs: { loadMs: number; domContentLoadedMs: number; firstFrameMs: number }[];
  nodes: number;
  jsHeapMiB: number;
  consoleErrors: string[];
}

export async function openInChromium(file: string, times: number): Promise<ChromiumLoad> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} not found: apt-get install chromium (never npx playwright install)`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  try {
    const url = pathToFileURL(file).href;
    const runs: ChromiumLoad['runs'] = [];
    const consoleErrors: string[] = [];
    let nodes = 0;
    let jsHeapMiB = 0;
    for (let i = 0; i < times; i++) {
      // A fresh page each time: nothing cached between loads.
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      page.on('console', (m) => void (m.type() === 'error' && consoleErrors.push(m.text())));
      page.on('pageerror', (e) => void consoleErrors.push(e.message));
      const t0 = performance.now();
      let domContentLoadedMs = 0;
      page.once('domcontentloaded', () => {
        domContentLoadedMs = performance.now() - t0;
      });
      await page.goto(url, { waitUntil: 'load', timeout: 120_000 });
      const loadMs = performance.now() - t0;
      // The page's own requestAnimationFrame (the benchmark's TypeScript has no DOM types).
      await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => resolve(null)))');
      const firstFrameMs = performance.now() - t0;
      runs.push({
        loadMs: round(loadMs),
        domContentLoadedMs: round(domContentLoadedMs),
        firstFrameMs: round(firstFrameMs),
      });
      const cdp = await context.newCDPSession(page);
      await cdp.send('Performance.enable');
      const { metrics } = await cdp.send('Performance.getMetrics');
      nodes = metrics.find((m) => m.name === 'Nodes')?.value ?? 0;
      jsHeapMiB = round((metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0) / 2 ** 20, 1);
      await context.close();
    }
    return { loadMs: round(median(runs.map((r) => r.loadMs))), runs, nodes, jsHeapMiB, consoleErrors };
  } finally {
    await browser.close();
  }
}
