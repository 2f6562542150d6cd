import {
  CONSOLE_ACCESS,
  type ConsolePath,
  type MeResponse,
  mayOpen,
  PERMISSIONS,
  TIERS,
  type Tier,
} from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, createScopedUser, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * GET /api/me, and the console's section rule (protocol CONSOLE_ACCESS) checked against the
 * portal's guards: a section the rule opens for a user is one whose calls the portal answers,
 * and one it hides is one the portal refuses.
 */

let portal: TestPortal;
let admin: string;
beforeAll(async () => {
  portal = await startTestPortal();
  admin = await portal.adminToken();
});
afterAll(async () => {
  await portal?.close();
});

const me = (token: string) => http(portal.url, 'GET', '/api/me', { headers: withToken(token) });

/** A call each section makes when it opens (the users page talks to the identity provider). */
const SECTION_CALLS: Record<ConsolePath, (token: string) => Promise<{ status: number }>> = {
  '/console/overview': (t) => http(portal.url, 'GET', '/api/overview', { headers: withToken(t) }),
  '/console/sessions': (t) => http(portal.url, 'GET', '/api/sessions?limit=1', { headers: withToken(t) }),
  '/console/findings': (t) => http(portal.url, 'GET', '/api/findings?limit=1', { headers: withToken(t) }),
  '/console/changes': (t) => http(portal.url, 'GET', '/api/targets/changes', { headers: withToken(t) }),
  '/console/fleet': (t) => http(portal.url, 'GET', '/api/health?agents=true&limit=1', { headers: withToken(t) }),
  '/console/commands': (t) => http(portal.url, 'GET', '/api/agent-commands?limit=1', { headers: withToken(t) }),
  '/console/schedules': (t) => http(portal.url, 'GET', '/api/agent-schedules', { headers: withToken(t) }),
  '/console/licenses': (t) => http(portal.url, 'GET', '/api/licenses', { headers: withToken(t) }),
  '/console/users': (t) =>
    http(portal.url, 'GET', '/identity/admin/users', { headers: { authorization: `Bearer ${t}` } }),
  '/console/webhooks': (t) => http(portal.url, 'GET', '/api/webhooks', { headers: withToken(t) }),
  '/console/audit': (t) => http(portal.url, 'GET', '/api/audit?days=1&limit=1', { headers: withToken(t) }),
  '/console/health': (t) => http(portal.url, 'GET', '/api/db-health', { headers: withToken(t) }),
};

async function scopedOf(tier: Tier | null) {
  const clientId = uniqueClientId(tier ?? 'nokey');
  if (tier !== null) await createLicense(portal, { tier, client_id: clientId });
  return { clientId, user: await createScopedUser(portal, [clientId]) };
}

describe('GET /api/me', () => {
  it("answers an admin's role and every permission", async () => {
    const res = await me(admin);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      admin: true,
      email: ADMIN_EMAIL,
      client_ids: null,
      tier: 'msp',
      permissions: [...PERMISSIONS],
    });
  });

  it("answers a scoped user's clients and the permissions of its clients' highest active tier", async () => {
    const { clientId, user } = await scopedOf('business');
    const res = await me(user.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      admin: false,
      email: user.email,
      client_ids: [clientId],
      tier: 'business',
      permissions: [
        'upload',
        'download',
        'sessions:read',
        'update:status',
        'benchmark',
        'remediation:update',
        'webhooks',
        'compliance',
        'agent:commands',
      ],
    });
  });

  it('refuses a missing or forged token with the plain 401', async () => {
    expect(await http(portal.url, 'GET', '/api/me')).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    expect(await me('a.b.c')).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
  });
});

describe('the console section rule matches what the portal answers', () => {
  const callers: [string, () => Promise<string>][] = [
    ['an admin', async () => admin],
    ['a scoped user without an active key', async () => (await scopedOf(null)).user.token],
    ...TIERS.map((tier): [string, () => Promise<string>] => [
      `a scoped user of a ${tier} client`,
      async () => (await scopedOf(tier)).user.token,
    ]),
  ];
  it.each(callers)('for %s', async (_name, tokenOf) => {
    const token = await tokenOf();
    const caller = (await me(token)).body as MeResponse;
    for (const path of Object.keys(CONSOLE_ACCESS) as ConsolePath[]) {
      const { status } = await SECTION_CALLS[path](token);
      expect({ path, status }).toEqual({ path, status: mayOpen(path, caller) ? 200 : 403 });
    }
  });
});
