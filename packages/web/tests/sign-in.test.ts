import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible, expectNoConsoleErrors, launchChromium, openPage, WIDTHS } from './helpers/browser.ts';
import { ADMIN_EMAIL, signIn, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';

/** `/` leads to sign-in, the password grant signs in, the layout and its navigation show, sign-out ends it. */
describe('console sign-in', () => {
  let portal: TestPortal;
  let browser: Browser;

  beforeAll(async () => {
    portal = await startConsolePortal();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  it.each(Object.entries(WIDTHS))('signs in from / and out again at the %s width', async (_name, viewport) => {
    const p = await openPage(browser, viewport);
    const { page } = p;
    try {
      await page.goto(`${portal.url}/`);
      expect(new URL(page.url()).pathname).toBe('/console/');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      await expectAccessible(page);

      await signIn(page, portal, undefined, '/console/');
      await expect.poll(() => new URL(page.url()).pathname).toBe('/console/sessions');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sessions');
      const nav = page.getByRole('navigation', { name: 'Sections' });
      expect(await nav.getByRole('link').allTextContents()).toEqual([
        'Sessions',
        'Fleet',
        'Commands',
        'Licenses',
        'Users',
        'Webhooks',
        'Audit',
        'Health',
      ]);
      expect(await page.getByText(ADMIN_EMAIL).isVisible()).toBe(true);
      await expectAccessible(page);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it("shows the identity provider's message for a wrong password", async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    try {
      await page.goto(`${portal.url}/console/`);
      await page.getByLabel('E-mail').fill(ADMIN_EMAIL);
      await page.getByLabel('Password').fill('not-the-password-123');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('Invalid username or password');
      expectNoConsoleErrors(p, [400]);
    } finally {
      await p.close();
    }
  });
});
