import type { Browser, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '@svc/test-support/chromium';
import { createLicense, uniqueClientId } from '@svc/test-support/factories';
import { loadFixture, postUpload, sessionParts } from '@svc/test-support/upload';
import { expectAccessible, expectNoConsoleErrors, openPage, WIDTHS } from './helpers/browser.ts';
import { createScopedUser, signInWithForm, startConsolePortal, type TestPortal } from './helpers/console-portal.ts';
import { poll } from './helpers/console-ui.ts';

/**
 * One sign-in for the console's tabs (packages/web/src/auth/session.ts): a link opened in a
 * new tab (Ctrl+click) is signed in, a sign-out in one tab signs every tab out, and neither
 * the sandboxed report frame nor a page of another origin can get the tokens.
 */

const MEMBER = { email: 'tabs-member@test.local', password: 'Tabs-member-password-0123!' };
const SESSION = '20250302_101500';
const TOKENS_KEY = 'svc.console.tokens';

const signedIn = (page: Page) => page.getByRole('button', { name: 'Sign out', exact: true }).isVisible();
const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();
const storedTokens = (page: Page) => page.evaluate((key) => sessionStorage.getItem(key), TOKENS_KEY);

/** Every message the console's channel carries to `where`, kept in `window.__heard`. */
async function listen(where: Page | Frame): Promise<string> {
  return where.evaluate(() => {
    const w = globalThis as unknown as { __heard: unknown[]; origin: string };
    w.__heard = [];
    const channel = new BroadcastChannel('svc.console.session');
    channel.onmessage = (e) => w.__heard.push(e.data);
    // Ask as a new console tab would: an answer would carry the tokens.
    channel.postMessage({ type: 'ask' });
    return w.origin;
  });
}
const heard = (where: Page | Frame) =>
  where.evaluate(() => (globalThis as unknown as { __heard: { type: string }[] }).__heard.map((m) => m.type));

describe('console tabs', () => {
  let portal: TestPortal;
  let browser: Browser;
  const clientId = uniqueClientId('tabs');

  beforeAll(async () => {
    portal = await startConsolePortal();
    browser = await launchChromium();
    const key = (await createLicense(portal, { tier: 'business', client_id: clientId })).key;
    const doc = loadFixture('session-complete.json');
    doc['metadata'] = { ...doc['metadata'], session_id: SESSION, client_id: clientId };
    const report = '<!doctype html><html lang="en"><head><title>r</title></head><body><h1>Report</h1></body></html>';
    const res = await postUpload(portal.url, key, sessionParts(doc, { report }));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    await createScopedUser(portal, MEMBER.email, MEMBER.password, [clientId]);
  });

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
  });

  describe.each(['desktop', 'phone'] as const)('at the %s width', (width) => {
    it.each(['admin', 'member'] as const)(
      'a link opened in a new tab is signed in; signing out there signs out the first tab (%s)',
      async (who) => {
        const p = await openPage(browser, WIDTHS[width]);
        try {
          await signInWithForm(p.page, portal, who === 'admin' ? undefined : MEMBER, '/console/sessions');
          const link = p.page.locator(`main a[href^="/collect/?session=${SESSION}"]`).first();
          await poll(() => link.count()).toBe(1);
          const opened = p.page.context().waitForEvent('page');
          await link.click({ modifiers: ['Control'] });
          const tab = await opened;
          const tabErrors: string[] = [];
          tab.on('console', (m) => {
            if (m.type() === 'error') tabErrors.push(m.text());
          });
          await tab.setViewportSize(WIDTHS[width]);
          await poll(() => signedIn(tab)).toBe(true);
          await poll(() => heading(tab)).toBe(`Session ${SESSION}`);
          // The same sign-in: the new tab holds the first tab's tokens, and it asked for no password.
          expect(await storedTokens(tab)).toBe(await storedTokens(p.page));
          expect(await tab.getByLabel('Password').count()).toBe(0);
          await poll(() => tab.locator('section[aria-labelledby="benchmark-h"] table').count()).toBe(1);
          await expectAccessible(tab);

          await tab.getByRole('button', { name: 'Sign out', exact: true }).click();
          await poll(() => heading(tab)).toBe('Sign in');
          await poll(() => heading(p.page)).toBe('Sign in');
          expect(await p.page.getByRole('status').first().textContent()).toBe('You signed out in another tab.');
          expect(await storedTokens(p.page)).toBeNull();
          await expectAccessible(p.page);
          expect(tabErrors).toEqual([]);
          expectNoConsoleErrors(p);
        } finally {
          await p.close();
        }
      },
    );
  });

  it('a second tab whose token is refused has the first tab refresh it: one refresh for both', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    try {
      const grants: { tab: string; grant: string }[] = [];
      const watch = (page: Page, tab: string) =>
        page.on('request', (r) => {
          if (new URL(r.url()).pathname === '/identity/token')
            grants.push({ tab, grant: new URLSearchParams(r.postData() ?? '').get('grant_type') ?? '' });
        });
      watch(p.page, 'first');
      await signInWithForm(p.page, portal, undefined, '/console/sessions');
      const second = await p.page.context().newPage();
      watch(second, 'second');
      const userCalls: number[] = [];
      second.on('response', (r) => {
        if (new URL(r.url()).pathname === '/identity/admin/users') userCalls.push(r.status());
      });
      await second.goto(`${portal.url}/console/sessions`);
      await poll(() => signedIn(second)).toBe(true);
      // The second tab's access token goes bad (the same claims, a signature the portal refuses).
      await second.evaluate((key) => {
        const t = JSON.parse(sessionStorage.getItem(key) ?? 'null') as { accessToken: string };
        const [header, claims] = t.accessToken.split('.');
        t.accessToken = `${header}.${claims}.${'A'.repeat(43)}`;
        sessionStorage.setItem(key, JSON.stringify(t));
      }, TOKENS_KEY);
      await second.goto(`${portal.url}/console/users`);
      await poll(() => second.locator('tbody').first().textContent()).toContain('admin@test.local');
      expect(userCalls).toEqual([401, 200]);
      // The first tab holds the refresher lock: it refreshed, once, and both tabs have the new tokens.
      expect(grants).toEqual([
        { tab: 'first', grant: 'password' },
        { tab: 'first', grant: 'refresh_token' },
      ]);
      await poll(async () => (await storedTokens(p.page)) === (await storedTokens(second))).toBe(true);
      expect(await signedIn(p.page)).toBe(true);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });

  it('the report frame and a page of another origin hear nothing and get no tokens', async () => {
    const p = await openPage(browser, WIDTHS.desktop);
    try {
      await signInWithForm(p.page, portal, undefined, `/collect/?session=${SESSION}&client_id=${clientId}`);
      const frameElement = p.page.locator('iframe.report-frame');
      await poll(() => frameElement.count()).toBe(1);
      const frame = await (await frameElement.elementHandle())!.contentFrame();
      await poll(() => frame!.locator('h1').textContent()).toBe('Report');

      // The framed report: an opaque origin, no storage, no locks; it joins a channel of its own.
      expect(await listen(frame!)).toBe('null');
      expect(
        await frame!.evaluate(() => {
          try {
            return sessionStorage.getItem('svc.console.tokens');
          } catch (err) {
            return (err as Error).name;
          }
        }),
      ).toBe('SecurityError');
      // A console page of the same origin listens too, as the control.
      expect(await listen(p.page)).toBe(portal.url);

      // Another origin: the same portal under localhost asks, and gets nothing: it shows the sign-in form.
      const other = await p.page.context().newPage();
      const otherUrl = portal.url.replace('127.0.0.1', 'localhost');
      await other.goto(`${otherUrl}/console/sessions`);
      await poll(() => heading(other)).toBe('Sign in');
      expect(await storedTokens(other)).toBeNull();
      expect(await listen(other)).toBe(otherUrl);

      // A new console tab asks; the answer reaches the console's own documents only.
      const tab = await p.page.context().newPage();
      await tab.goto(`${portal.url}/console/sessions`);
      await poll(() => signedIn(tab)).toBe(true);
      await poll(() => heard(p.page)).toContain('tokens');
      expect(await heard(frame!)).toEqual([]);
      expect(await heard(other)).toEqual([]);
      expect(await other.getByRole('button', { name: 'Sign out', exact: true }).count()).toBe(0);
      expectNoConsoleErrors(p);
    } finally {
      await p.close();
    }
  });
});
