import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  startTestPortal,
  type TestPortal,
  type TestPortalOptions,
} from '../../../../test-support/portal.ts';

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

/** Sign in through the console's form, starting at `target` (default `/`), and wait for the signed-in layout. */
export async function signIn(
  page: Page,
  portal: TestPortal,
  creds: { email: string; password: string } = { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  target = '/',
): Promise<void> {
  await page.goto(`${portal.url}${target}`);
  await page.getByLabel('E-mail').fill(creds.email);
  await page.getByLabel('Password').fill(creds.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
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
