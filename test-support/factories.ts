import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { CreateLicenseBody, CreatedLicenseResponse } from '@svc/protocol';
import { http, withToken } from './http.ts';
import { login, type TestPortal } from './portal.ts';

/** Test-data factories (factories for test data). Every factory goes through the public API. */

/** A client id no other test uses, so tests sharing one portal do not see each other's rows. */
export function uniqueClientId(label = 'client'): string {
  return `${label}-${randomBytes(4).toString('hex')}`;
}

export type CreatedLicense = CreatedLicenseResponse['license'];

export interface LicenseFixture {
  /** The plaintext key, as shown once in the creation response. */
  key: string;
  /** The full creation response's `license` (includes `plaintext_key`). */
  record: CreatedLicense;
}

/**
 * POST /api/licenses as the bootstrap admin (or `token`). Fields not overridden: tier
 * professional, a fresh client id, a name. Throws unless the answer is 201.
 */
export async function createLicense(
  portal: TestPortal,
  overrides: Partial<CreateLicenseBody> = {},
  token?: string,
): Promise<LicenseFixture> {
  const body = {
    tier: 'professional',
    client_id: uniqueClientId(),
    name: `key ${randomBytes(3).toString('hex')}`,
    ...overrides,
  };
  const res = await http(portal.url, 'POST', '/api/licenses', {
    headers: withToken(token ?? (await portal.adminToken())),
    json: body,
  });
  if (res.status !== 201) throw new Error(`createLicense: ${res.status} ${res.text}`);
  return { key: res.body.license.plaintext_key, record: res.body.license };
}

/** PATCH /api/licenses?id= {action} as the admin; throws unless 200. */
export async function licenseAction(
  portal: TestPortal,
  id: string,
  action: 'revoke' | 'deactivate' | 'activate',
): Promise<any> {
  const res = await http(portal.url, 'PATCH', `/api/licenses?id=${encodeURIComponent(id)}`, {
    headers: withToken(await portal.adminToken()),
    json: { action },
  });
  if (res.status !== 200) throw new Error(`licenseAction ${action}: ${res.status} ${res.text}`);
  return res.body.license;
}

export interface ScopedUser {
  id: string;
  email: string;
  password: string;
  clientIds: string[];
  /** An access token for X-Identity-Token. */
  token: string;
}

/** A member user of the portal's own identity provider, scoped to `clientIds`, already logged in. */
export async function createScopedUser(
  portal: TestPortal,
  clientIds: string[],
  opts: { role?: 'member' | 'admin' } = {},
): Promise<ScopedUser> {
  const email = `user-${randomBytes(5).toString('hex')}@test.local`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const res = await fetch(`${portal.url}/identity/admin/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await portal.adminToken()}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, role: opts.role ?? 'member', client_ids: clientIds }),
  });
  const body = (await res.json()) as { user?: { id: string }; error?: string };
  if (res.status !== 201 || !body.user) throw new Error(`createScopedUser: ${res.status} ${JSON.stringify(body)}`);
  return { id: body.user.id, email, password, clientIds, token: await login(portal.url, email, password) };
}

/** A direct connection to the portal's database, for checking what is stored and planting old rows. */
export async function openDb(portal: TestPortal): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: portal.databaseUrl });
  await client.connect();
  return client;
}

/** A fresh agent id, `svcd_<label>_<8 hex>`. */
export function newAgentId(label = 'agent'): string {
  return `svcd_${label}_${randomBytes(4).toString('hex')}`;
}

/** A clock the test moves by hand (startTestPortal's `now`); starts at the real time. */
export class FakeClock {
  #t: number;
  constructor(start: Date = new Date()) {
    this.#t = start.getTime();
  }
  now = (): Date => new Date(this.#t);
  advance(ms: number): void {
    this.#t += ms;
  }
  set(d: Date): void {
    this.#t = d.getTime();
  }
}

export const DAY_MS = 86_400_000;

/** A valid heartbeat body of `agentId` (the five required fields), with `extra` on top. */
export function heartbeatBody(agentId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agent_id: agentId,
    version: '4.2.3',
    timestamp: '2025-06-01T12:00:00.000Z',
    status: 'running',
    uptime_seconds: 120,
    ...extra,
  };
}
