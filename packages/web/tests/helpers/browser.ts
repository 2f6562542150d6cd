import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';

/** The two widths every page must be readable at: a phone and a desktop. */
export const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1440, height: 900 } } as const;

export interface ConsolePage {
  page: Page;
  /** console.error messages and uncaught exceptions, in order. */
  errors: string[];
  close(): Promise<void>;
}

/**
 * A page in its own browser context (own storage, so signed-in state never leaks between
 * tests) that records every console error and uncaught exception. A CSP violation is a
 * console error too, so a page that breaks the portal's CSP fails `expectNoConsoleErrors`.
 */
export async function openPage(
  browser: Browser,
  viewport: { width: number; height: number },
  opts: { permissions?: string[]; ignoreHTTPSErrors?: boolean } = {},
): Promise<ConsolePage> {
  const context = await browser.newContext({
    viewport,
    permissions: opts.permissions ?? [],
    ignoreHTTPSErrors: opts.ignoreHTTPSErrors ?? false,
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return { page, errors, close: () => context.close() };
}

/**
 * Until nothing on the page is loading (every loading state carries aria-busy="true"). The
 * session view's sections load side by side and grow as they arrive, so a control below them
 * moves: a click aimed at it while a section above is still loading can land beside it.
 */
export async function untilSettled(page: Page): Promise<void> {
  // The page's heading mounts in the same render as its loading states, so "a heading and
  // nothing busy" cannot be true before the page has started loading.
  const settled = async () =>
    (await page.locator('main h1').count()) > 0 && (await page.locator('[aria-busy="true"]').count()) === 0;
  await expect.poll(settled, { timeout: 20_000 }).toBe(true);
}

/**
 * No console errors, except the browser's own "Failed to load resource" line for answers a
 * test provoked on purpose (a 403 or 409 the page then shows), named by status.
 */
export function expectNoConsoleErrors(p: ConsolePage, allowStatuses: number[] = []): void {
  const allowed = (e: string) =>
    allowStatuses.some((s) => e.includes(`Failed to load resource: the server responded with a status of ${s}`));
  expect(p.errors.filter((e) => !allowed(e))).toEqual([]);
}

const require = createRequire(import.meta.url);
let axeSource: string | null = null;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** Rules that fail a page at any impact: landmark-unique is "moderate", and screen reader users lose their way by it. */
const ALWAYS_FAILING = new Set(['landmark-unique']);

/**
 * axe-core run on the page as it is now: no serious or critical violation, and none of
 * ALWAYS_FAILING. Injected through
 * the debugging protocol (page.evaluate), which the page's CSP does not govern, so the CSP
 * under test stays on.
 */
export async function expectAccessible(page: Page): Promise<void> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run();
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  });
  expect(
    violations.filter((v) => v.impact === 'serious' || v.impact === 'critical' || ALWAYS_FAILING.has(v.id)),
  ).toEqual([]);
}
