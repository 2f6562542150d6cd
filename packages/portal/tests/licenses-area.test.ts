import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyVerifier } from '../src/auth/api-keys.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { Database } from '../src/db/schema.ts';
import { DomainError } from '../src/domain/errors.ts';
import { type DomainEvent, EventBus } from '../src/events/bus.ts';
import type { LicenseChangeDeps } from '../src/licenses/changes.ts';
import { createLicense, type LicenseInput } from '../src/licenses/create.ts';
import { sha256 } from '../src/licenses/keys.ts';
import { changeLicenseState, deleteLicense, type LicenseAction } from '../src/licenses/lifecycle.ts';
import { listLicenses } from '../src/licenses/list.ts';
import { createTestDatabase } from '@svc/test-support/portal';

// The license rules as area functions on a real database: the DomainError each refusal
// throws (code and documented message), what a change stores, audits and announces after commit.
let db: Kysely<Database>;
let deps: LicenseChangeDeps & { keys: ApiKeyVerifier; events: EventBus };
const heard: DomainEvent[] = [];
const NOW = new Date('2026-11-25T12:00:00.000Z');
const by = { actor: 'admin@test.local', now: NOW };

beforeAll(async () => {
  db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: await createTestDatabase(), max: 2 }) }),
  });
  await migrateToLatest(db);
  const events = new EventBus(pino({ level: 'silent' }));
  events.subscribe((e) => void heard.push(e));
  deps = { db, keys: new ApiKeyVerifier(db, null), events };
});

afterAll(async () => {
  await db.destroy();
});

const input = (over: Partial<LicenseInput> = {}): LicenseInput => ({
  tier: 'business',
  client_id: 'acme',
  name: 'Acme',
  expires_at: null,
  ...over,
});

/** What `fn` throws, which must be a DomainError. */
async function refusal(fn: () => Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await fn().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  const { code, message } = err as DomainError;
  return { code, message };
}

async function heardAfter(fn: () => Promise<unknown>): Promise<DomainEvent[]> {
  heard.length = 0;
  await fn();
  await deps.events.drain();
  return [...heard];
}

describe('createLicense', () => {
  it('takes the tier defaults for omitted limits, keeps an explicit null, stores the hash only, audits and announces', async () => {
    let created: Awaited<ReturnType<typeof createLicense>> | undefined;
    const events = await heardAfter(async () => {
      created = await createLicense(deps, input({ max_agents: null }), by);
    });
    const { row, plaintextKey } = created!;
    expect(row).toMatchObject({ tier: 'business', max_sessions: 500, max_agents: null, created_by: by.actor });
    expect(row.created_at).toEqual(NOW);
    expect(plaintextKey.startsWith(row.key_prefix)).toBe(true);
    expect(row.key_hash).toBe(sha256(plaintextKey).toString('hex'));
    expect(events).toEqual([
      expect.objectContaining({
        event_type: 'license_created',
        actor: by.actor,
        client_id: 'acme',
        data: expect.objectContaining({ license_id: row.id, max_sessions: 500, max_agents: null, expires_at: null }),
      }),
    ]);
  });

  it('refuses an expiry that is not after now, and stores nothing', async () => {
    const before = await listLicenses(db, { client_id: 'past' }, NOW);
    for (const expires_at of [NOW, new Date(NOW.getTime() - 1)]) {
      const events = await heardAfter(async () => {
        expect(await refusal(() => createLicense(deps, input({ client_id: 'past', expires_at }), by))).toEqual({
          code: 'invalid.license_expiry',
          message: 'expires_at must be in the future',
        });
      });
      expect(events).toEqual([]);
    }
    expect(await listLicenses(db, { client_id: 'past' }, NOW)).toEqual(before);
  });
});

describe('changeLicenseState and deleteLicense', () => {
  it('refuse an unknown id with not_found.license', async () => {
    for (const action of ['revoke', 'deactivate', 'activate'] as LicenseAction[])
      expect(await refusal(() => changeLicenseState(deps, 'lic_missing', action, by))).toEqual({
        code: 'not_found.license',
        message: 'License not found',
      });
    expect(await refusal(() => deleteLicense(deps, 'lic_missing', by.actor))).toEqual({
      code: 'not_found.license',
      message: 'License not found',
    });
  });

  it('refuse an action that changes nothing, and any change or a delete in the wrong state', async () => {
    const { row } = await createLicense(deps, input({ client_id: 'states' }), by);
    expect(await refusal(() => changeLicenseState(deps, row.id, 'activate', by))).toEqual({
      code: 'conflict.license_active',
      message: 'License key is already active',
    });
    expect(await refusal(() => deleteLicense(deps, row.id, by.actor))).toEqual({
      code: 'conflict.license_not_revoked',
      message: 'Only a revoked license key can be deleted',
    });
    expect((await changeLicenseState(deps, row.id, 'deactivate', by)).is_active).toBe(false);
    expect(await refusal(() => changeLicenseState(deps, row.id, 'deactivate', by))).toEqual({
      code: 'conflict.license_inactive',
      message: 'License key is already inactive',
    });
    expect((await changeLicenseState(deps, row.id, 'revoke', by)).revoked_at).toEqual(NOW);
    for (const action of ['revoke', 'deactivate', 'activate'] as LicenseAction[])
      expect(await refusal(() => changeLicenseState(deps, row.id, action, by))).toEqual({
        code: 'conflict.license_revoked',
        message: 'License key has been revoked',
      });
  });

  it('a revocation reaches a key lookup cached before it, and the deletion of the revoked key is audited', async () => {
    const { row, plaintextKey } = await createLicense(deps, input({ client_id: 'cached' }), by);
    const cached = await deps.keys.lookup(plaintextKey);
    expect(cached).toMatchObject({ kind: 'license', row: { id: row.id, revoked_at: null } });
    const revoked = await heardAfter(() => changeLicenseState(deps, row.id, 'revoke', by));
    expect(revoked.map((e) => e.event_type)).toEqual(['license_revoked']);
    expect(await deps.keys.lookup(plaintextKey)).toMatchObject({ kind: 'license', row: { revoked_at: NOW } });
    const deleted = await heardAfter(() => deleteLicense(deps, row.id, by.actor));
    expect(deleted).toEqual([
      expect.objectContaining({
        event_type: 'license_deleted',
        client_id: 'cached',
        data: { license_id: row.id, key_prefix: row.key_prefix, tier: 'business' },
      }),
    ]);
    expect(await listLicenses(db, { client_id: 'cached' }, NOW)).toEqual([]);
  });
});

describe('listLicenses', () => {
  it('filters by the status derived from the clock it is given', async () => {
    const expires_at = new Date(NOW.getTime() + 60_000);
    const { row } = await createLicense(deps, input({ client_id: 'clock', expires_at }), by);
    const ids = async (now: Date, status?: 'active' | 'expired') =>
      (await listLicenses(db, { client_id: 'clock', status }, now)).map((l) => l.id);
    expect(await ids(NOW, 'active')).toEqual([row.id]);
    expect(await ids(NOW, 'expired')).toEqual([]);
    expect(await ids(expires_at, 'expired')).toEqual([row.id]);
    expect(await ids(expires_at, 'active')).toEqual([]);
    expect(await ids(expires_at)).toEqual([row.id]);
  });
});
