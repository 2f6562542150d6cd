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
