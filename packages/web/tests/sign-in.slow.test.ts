import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '@svc/test-support/chromium';
import { expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { ADMIN_EMAIL, signInWithForm, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { screenshot } from '@svc/test-support/screenshots';

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

  it.each(Object.entries(WIDTHS))('signs in from / and out again at the %s width', async (name, viewport) => {
    const p = await openPage(browser, viewport);
    const { page } = p;
    try {
      await page.goto(`${portal.url}/`);
      expect(new URL(page.url()).pathname).toBe('/console/');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      await expectAccessible(page);
      if (name === 'desktop') {
        await screenshot(page, 'sign-in.png');
      }

      await signInWithForm(page, portal, undefined, '/console/');
      await expect.poll(() => new URL(page.url()).pathname).toBe('/console/overview');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
      const nav = page.getByRole('navigation', { name: 'Sections' });
      // The sections a key's tier adds appear once the portal's answer on access is applied.
      await expect
        .poll(() => nav.getByRole('link').allTextContents())
        .toEqual([
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
      expect(await page.getByText(ADMIN_EMAIL).isVisible()).toBe(true);
      await expectAccessible(page);

      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  const storedTokens = (page: import('playwright-core').Page) =>
    page.evaluate(
      () =>
        JSON.parse(sessionStorage.getItem('svc.console.tokens') ?? 'null') as {
          accessToken: string;
          refreshToken: string;
        },
    );
  /** What a copied refresh token and access token still get from the portal: the refresh answer and GET /identity/user. */
  async function stillValid(tokens: { accessToken: string; refreshToken: string }) {
    const refresh = await fetch(`${portal.url}/identity/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken }),
    });
    const user = await fetch(`${portal.url}/identity/user`, {
      headers: { authorization: `Bearer ${tokens.accessToken}` },
    });
    return { refresh: { status: refresh.status, body: await refresh.json() }, user: user.status };
  }
  const ended = {
    refresh: { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid or expired refresh token' } },
    user: 401,
  };

  it('sign-out revokes the session at the portal: a refresh token copied before it no longer refreshes, its access token gets 401', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const revokes: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/identity/revoke')
        revokes.push(new URLSearchParams(r.postData() ?? '').get('token_type_hint') ?? '');
    });
    try {
      await signInWithForm(page, portal);
      const copied = await storedTokens(page);
      // The tab forgets its tokens first and then asks for the revocation: the copy ends once
      // the portal has answered it, which can be after the form shows.
      const revoked = page.waitForResponse((r) => new URL(r.url()).pathname === '/identity/revoke');
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      await revoked;
      expect(revokes).toEqual(['refresh_token']);
      expect(await stillValid(copied)).toEqual(ended);
      // A call the overview still had in flight when the session was revoked is answered 401, as the revocation intends.
      expectNoConsoleErrors(p, [401]);
    } finally {
      await p.close();
    }
  });

  it('a call still in flight at sign-out is answered 401 and tries no refresh with the revoked token', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const grants: string[] = [];
    let revoked = () => {};
    const revocation = new Promise<void>((resolve) => (revoked = resolve));
    page.on('request', (r) => {
      const at = new URL(r.url()).pathname;
      if (at === '/identity/revoke') revoked();
      if (at === '/identity/token') grants.push(new URLSearchParams(r.postData() ?? '').get('grant_type') ?? '');
    });
    try {
      await signInWithForm(page, portal);
      // Calls the console makes from now on reach the portal only once the session is revoked.
      let held = 0;
      await page.route('**/api/**', async (route) => {
        held++;
        await revocation;
        await route.continue();
      });
      await page.getByRole('link', { name: 'Sessions' }).click();
      await expect.poll(() => held).toBeGreaterThan(0);
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      await expect.poll(() => page.evaluate(() => sessionStorage.length)).toBe(0);
      // The user signed out: no message that the session ended, and no refresh after the revocation.
      expect(await page.getByText('Your session has ended').count()).toBe(0);
      expect(grants).toEqual(['password']);
      expectNoConsoleErrors(p, [401]);
    } finally {
      await p.close();
    }
  });

  it('"Sign out everywhere" ends the sessions of other browsers too', async () => {
    const here = await openPage(browser, WIDTHS.desktop);
    const there = await openPage(browser, WIDTHS.phone);
    try {
      await signInWithForm(there.page, portal);
      const elsewhere = await storedTokens(there.page);
      await signInWithForm(here.page, portal);
      const copied = await storedTokens(here.page);
      await here.page.getByRole('button', { name: 'Sign out everywhere' }).click();
      await expect.poll(() => here.page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      expect(await here.page.evaluate(() => sessionStorage.length)).toBe(0);
      expect(await stillValid(copied)).toEqual(ended);
      expect(await stillValid(elsewhere)).toEqual(ended);
      // The other browser finds out on its next call and is sent to sign in.
      await there.page.reload();
      await expect.poll(() => there.page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      expectNoConsoleErrors(here, [401]);
    } finally {
      await here.close();
      await there.close();
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

  it('refreshes the access token before it expires, and keeps working with the new one', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const grants: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/identity/token')
        grants.push(new URLSearchParams(r.postData() ?? '').get('grant_type') ?? '');
    });
    try {
      // The page's clock only: the portal's stays real, so the refreshed token is really valid.
      await page.clock.install();
      await signInWithForm(page, portal);
      const stored = () => page.evaluate(() => JSON.parse(sessionStorage.getItem('svc.console.tokens') ?? 'null'));
      const before = (await stored()) as { accessToken: string; refreshToken: string };
      expect(grants).toEqual(['password']);
      // Tokens live an hour; the refresh is due a minute before expiry.
      await page.clock.fastForward('58:00');
      expect(grants).toEqual(['password']);
      await page.clock.fastForward('01:30');
      await expect.poll(() => grants).toEqual(['password', 'refresh_token']);
      await expect
        .poll(async () => ((await stored()) as { refreshToken: string }).refreshToken)
        .not.toBe(before.refreshToken);
      // The new token works: a fresh load of the list is answered.
      await page.getByRole('link', { name: 'Sessions' }).click();
      await page.reload();
      await expect.poll(() => page.getByText('No sessions match.').isVisible()).toBe(true);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('refreshes an access token the identity provider refuses on the Users page, and retries once', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const grants: string[] = [];
    const userCalls: number[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/identity/token')
        grants.push(new URLSearchParams(r.postData() ?? '').get('grant_type') ?? '');
    });
    page.on('response', (r) => {
      if (new URL(r.url()).pathname === '/identity/admin/users') userCalls.push(r.status());
    });
    try {
      await signInWithForm(page, portal);
      // The same claims with a signature the identity provider rejects: what an expired token meets.
      await page.evaluate(() => {
        const t = JSON.parse(sessionStorage.getItem('svc.console.tokens') ?? 'null') as { accessToken: string };
        const [header, claims] = t.accessToken.split('.');
        t.accessToken = `${header}.${claims}.${'A'.repeat(43)}`;
        sessionStorage.setItem('svc.console.tokens', JSON.stringify(t));
      });
      await page.goto(`${portal.url}/console/users`);
      await expect.poll(() => page.locator('tbody').first().textContent()).toContain(ADMIN_EMAIL);
      expect(userCalls).toEqual([401, 200]);
      expect(grants).toEqual(['password', 'refresh_token']);
      expect(await page.getByRole('button', { name: 'Sign out', exact: true }).isVisible()).toBe(true);
      expectNoConsoleErrors(p, [401]);
    } finally {
      await p.close();
    }
  });

  it('refreshes in place when the tab that held the refresher lock goes away without answering', async () => {
    // What a reload meets: the old document's lock is still listed while it unloads.
    const p = await openPage(browser, WIDTHS.desktop);
    const { page } = p;
    const holder = await page.context().newPage();
    const grants: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/identity/token')
        grants.push(new URLSearchParams(r.postData() ?? '').get('grant_type') ?? '');
    });
    try {
      // A document of the console's origin that holds the lock and hears the channel, but never answers.
      await holder.goto(`${portal.url}/api/health`);
      await holder.evaluate(async () => {
        const w = globalThis as unknown as { heard: string[]; release: () => void };
        w.heard = [];
        new BroadcastChannel('svc.console.session').onmessage = (e: { data: { type: string } }) => {
          w.heard.push(e.data.type);
        };
        await new Promise<void>((granted) => {
          void navigator.locks.request('svc.console.refresher', () => {
            granted();
            return new Promise<void>((release) => {
              w.release = release;
            });
          });
        });
      });
      await signInWithForm(page, portal);
      await page.evaluate(() => {
        const t = JSON.parse(sessionStorage.getItem('svc.console.tokens') ?? 'null') as { accessToken: string };
        const [header, claims] = t.accessToken.split('.');
        t.accessToken = `${header}.${claims}.${'A'.repeat(43)}`;
        sessionStorage.setItem('svc.console.tokens', JSON.stringify(t));
      });
      await page.goto(`${portal.url}/console/users`);
      await expect
        .poll(() => holder.evaluate(() => (globalThis as unknown as { heard: string[] }).heard))
        .toContain('refresh');
      expect(grants).toEqual(['password']);
      await holder.evaluate(() => (globalThis as unknown as { release: () => void }).release());
      await expect.poll(() => page.locator('tbody').first().textContent()).toContain(ADMIN_EMAIL);
      expect(grants).toEqual(['password', 'refresh_token']);
      expect(await page.getByRole('button', { name: 'Sign out', exact: true }).isVisible()).toBe(true);
      expectNoConsoleErrors(p, [401]);
    } finally {
      await p.close();
    }
  });
});
