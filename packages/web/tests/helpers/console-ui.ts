import type { Browser, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { type ConsolePage, openPage, WIDTHS } from './browser.ts';
import { signIn, type TestPortal } from './console-portal.ts';

/** What the fleet and administration browser tests share: signed-in pages, rows, notes and confirmations. */

/** Waits long enough for a 2 s poll cycle on a loaded machine. */
export const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000 });

export const row = (page: Page, attr: string, value: string | number) => page.locator(`tr[data-${attr}="${value}"]`);
export const notice = (page: Page) => page.locator('p.adm-notice').first();
export const alert = (page: Page) => page.locator('p.alert-error').first();

/** Click `label` in `scope`, then the confirmation's `Yes, <label>`. */
export async function confirm(page: Page, scope: Locator, label: string): Promise<void> {
  await scope.getByRole('button', { name: label, exact: true }).click();
  await page
    .getByRole('alertdialog')
    .getByRole('button', { name: `Yes, ${label.toLowerCase()}` })
    .click();
}

/** A new page at one of the two widths, signed in as the admin and opened at `target`. */
export async function openSignedIn(
  browser: Browser,
  portal: TestPortal,
  width: keyof typeof WIDTHS,
  target: string,
): Promise<ConsolePage> {
  const p = await openPage(browser, WIDTHS[width]);
  await signIn(p.page, portal, undefined, target);
  return p;
}

/** What a function run in the page reads of a table cell (the tests compile without the DOM's types). */
interface DrawnCell {
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { top: number; left: number };
}

/** Which cell of a row is drawn first (topmost, then leftmost): the lead of a stacked row on a phone. */
export const firstDrawnLabel = (tableRow: Locator) =>
  tableRow.evaluate((tr) => {
    const cells = Array.from(tr.querySelectorAll(':scope > td, :scope > th') as ArrayLike<DrawnCell>).map((c) => ({
      label: c.getAttribute('data-label'),
      box: c.getBoundingClientRect(),
    }));
    cells.sort((a, b) => a.box.top - b.box.top || a.box.left - b.box.left);
    return cells[0]?.label ?? null;
  });

export const noSidewaysScroll = (page: Page): Promise<boolean> =>
  page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth');
