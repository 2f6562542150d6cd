import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TokenResponse } from '@svc/protocol';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { TOKENS_STORAGE_KEY, tokensOf } from '../../src/auth/stored-tokens.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  startTestPortal,
  type TestPortal,
  type TestPortalOptions,
} from '@svc/test-support/portal';

export { ADMIN_EMAIL, ADMIN_PASSWORD, type TestPortal };

/** The built console the portal serves (`npm run build:web`; `npm test` builds it first). */
export const WEB_DIST = path.resolve(import.meta.dirname, '../../dist');

/**
 * A real portal (own database, identity provider, bootstrap admin) serving the built console,
 * listening where its base URL says: the identity provider refuses a sign-in whose Origin is
 * not the portal's own.
 */
export async function startConsolePortal(opts: TestPortalOptions = {}): Promise<TestPortal> {
  if (!existsSync(path.join(WEB_DIST, 'index.html'))) {
    throw new Error(`The console is not built (${WEB_DIST}): run \`npm run build:web\` (\`npm test\` runs it first).`);
  }
  return startTestPortal({ ...opts, ownBaseUrl: true, env: { SVC_WEB_DIR: WEB_DIST, ...opts.env } });
}

type Credentials = { email: string; password: string };
const ADMIN: Credentials = { email: ADMIN_EMAIL, password: ADMIN_PASSWORD };

/** Sign in through the console's form, starting at `target` (default `/`), and wait for the signed-in layout. */
export async function signInWithForm(page: Page, portal: TestPortal, creds = ADMIN, target = '/'): Promise<void> {
  await page.goto(`${portal.url}${target}`);
  await page.getByLabel('E-mail').fill(creds.email);
  await page.getByLabel('Password').fill(creds.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await untilSignedIn(page);
}

/**
 * One password grant per portal and user for the whole test file, taken again once it is half
 * an hour old: the console refreshes a token a minute before its hour ends, so a page given a
 * grant younger than that never refreshes the refresh token another page holds too.
 */
const grants = new Map<string, { tokens: TokenResponse; issuedAt: number }>();
const GRANT_REUSE_MS = 30 * 60_000;

async function grantFor(portal: TestPortal, creds: Credentials) {
  const key = `${portal.url} ${creds.email}`;
  const held = grants.get(key);
  if (held !== undefined && Date.now() - held.issuedAt < GRANT_REUSE_MS) return held;
  const issuedAt = Date.now();
  const res = await fetch(`${portal.url}/identity/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', username: creds.email, password: creds.password }),
  });
  if (res.status !== 200) throw new Error(`sign-in of ${creds.email}: ${res.status} ${await res.text()}`);
  const grant = { tokens: (await res.json()) as TokenResponse, issuedAt };
  grants.set(key, grant);
  return grant;
}

/**
 * Open the console at `target` (default `/`) signed in as `creds` (default the admin), the way
 * a signed-in tab holds it: its tokens in the tab's sessionStorage, put there before the
 * console's first script runs, once per tab (a reload or a sign-out later in the test sees what
 * the console itself left). The form itself is tested in sign-in.slow.test.ts and uses
 * `signInWithForm`.
 */
export async function signIn(page: Page, portal: TestPortal, creds = ADMIN, target = '/'): Promise<void> {
  const { tokens, issuedAt } = await grantFor(portal, creds);
  await page.addInitScript(
    ([origin, key, value, mark]) => {
      // The tab's name outlives its reloads and leaves its sessionStorage as the console keeps
      // it; each sign-in marks it, so a later one on the same page still applies once.
      // `origin` is the document's: "null" in the sandboxed report frame, whose URL is the portal's.
      const tab = globalThis as unknown as { origin: string; name: string };
      if (tab.origin !== origin || tab.name.split(' ').includes(mark)) return;
      tab.name = `${tab.name} ${mark}`.trim();
      sessionStorage.setItem(key, value);
    },
    [
      new URL(portal.url).origin,
      TOKENS_STORAGE_KEY,
      JSON.stringify(tokensOf(tokens, issuedAt)),
      `svc-test-sign-in-${randomBytes(4).toString('hex')}`,
    ] as const,
  );
  await page.goto(`${portal.url}${target}`);
  await untilSignedIn(page);
}

async function untilSignedIn(page: Page): Promise<void> {
  await expect
    .poll(() => page.getByRole('button', { name: 'Sign out', exact: true }).isVisible(), { timeout: 15_000 })
    .toBe(true);
}

/** A scoped (member) user of the identity provider, created by the admin: sees only `clientIds`. */
export async function createScopedUser(
  portal: TestPortal,
  email: string,
  password: string,
  clientIds: string[],
): Promise<void> {
  const res = await fetch(`${portal.url}/identity/admin/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await portal.adminToken()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, role: 'member', client_ids: clientIds }),
  });
  if (res.status !== 201 && res.status !== 200) throw new Error(`create user: ${res.status} ${await res.text()}`);
}
