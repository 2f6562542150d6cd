import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UserPrincipal } from '../src/auth/principal.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { Database } from '../src/db/schema.ts';
import { DomainError } from '../src/domain/errors.ts';
import {
  assertClientAllowed,
  assertRedeliverable,
  assertSafeUrl,
  deliveryFor,
  subscriptionFor,
} from '../src/webhooks/access.ts';
import { listDeliveries } from '../src/webhooks/deliveries.ts';
import {
  changeSubscription,
  createSubscription,
  listSubscriptions,
  removeSubscription,
  type SubscriptionDeps,
} from '../src/webhooks/subscriptions.ts';
import { WebhookSecrets } from '../src/webhooks/secrets.ts';
import { HOST_REFUSED } from '../src/webhooks/url-safety.ts';
import { createTestDatabase } from '@svc/test-support/portal';

// The webhook rules as area functions on a real database: scoping, URL checks and per-client
// limits, each refusal a DomainError with a stable code and the message the API answers.
let db: Kysely<Database>;
let deps: SubscriptionDeps;
const NOW = new Date('2026-11-25T12:00:00.000Z');
const MAX = 2;
const HOSTS: Record<string, string[]> = { 'receiver.test': ['93.184.216.34'], 'internal.test': ['10.0.0.1'] };

const user = (admin: boolean, clientIds: string[] | null): UserPrincipal => ({
  kind: 'user',
  subject: admin ? 'admin' : 'member',
  email: null,
  admin,
  clientIds,
  tier: 'msp',
  permissions: new Set(['webhooks']),
});
const admin = user(true, null);
const acme = user(false, ['acme']);

beforeAll(async () => {
  db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: await createTestDatabase(), max: 2 }) }),
  });
  await migrateToLatest(db);
  deps = {
    db,
    now: () => NOW,
    webhooks: { resolver: async (host) => HOSTS[host] ?? [], allow: [], secrets: new WebhookSecrets(randomBytes(32)) },
    config: { webhooks: { maxPerClient: MAX } },
  };
});

afterAll(async () => {
  await db.destroy();
});

beforeEach(async () => {
  await db.deleteFrom('webhook_subscriptions').execute();
});

async function refusal(fn: () => unknown): Promise<{ code: string; message: string }> {
  const err = await (async () => fn())().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  const { code, message } = err as DomainError;
  return { code, message };
}

const body = (url: string, client_id: string | null = 'acme') => ({
  url,
  event_types: ['status_changed' as const],
  client_id,
});

async function logDelivery(subscriptionId: string, clientId: string | null): Promise<string> {
  const row = await db
    .insertInto('webhook_deliveries')
    .values({
      subscription_id: subscriptionId,
      event_id: 'evt_1',
      event_type: 'status_changed',
      body: '{}',
      client_id: clientId,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

describe('access', () => {
  it('a subscription out of the caller scope is as missing as an unknown one', async () => {
    const { row } = await createSubscription(deps, admin, body('https://receiver.test/a', 'globex'));
    const missing = { code: 'not_found.webhook_subscription', message: 'Subscription not found' };
    expect(await refusal(() => subscriptionFor(db, acme, 'whsub_missing'))).toEqual(missing);
    expect(await refusal(() => subscriptionFor(db, acme, row.id))).toEqual(missing);
    expect((await subscriptionFor(db, admin, row.id)).id).toBe(row.id);
  });

  it('a delivery is not found when unknown, past 2^53, of another client, or of a subscription out of scope', async () => {
    const { row: moved } = await createSubscription(deps, admin, body('https://receiver.test/m', 'globex'));
    const acmeEventOfMoved = await logDelivery(moved.id, 'acme');
    const globexEvent = await logDelivery(moved.id, 'globex');
    const missing = { code: 'not_found.webhook_delivery', message: 'Delivery not found' };
    for (const id of [999_999, 2 ** 53 + 2, Number(globexEvent), Number(acmeEventOfMoved)])
      expect(await refusal(() => deliveryFor(db, acme, id))).toEqual(missing);
    const found = await deliveryFor(db, admin, Number(acmeEventOfMoved));
    expect(found.subscription.id).toBe(moved.id);
    expect(refusalOfSync(() => assertRedeliverable(found.delivery, found.subscription))).toEqual({
      code: 'conflict.webhook_delivery_moved',
      message: 'This delivery belongs to another client than its subscription has now; it cannot be redelivered',
    });
  });

  it('only an admin may have a subscription without client_id, and a member only for its own clients', async () => {
    expect(refusalOfSync(() => assertClientAllowed(acme, null))).toEqual({
      code: 'forbidden.webhook_all_clients',
      message: "A subscription without client_id receives every client's events: admin only",
    });
    expect(refusalOfSync(() => assertClientAllowed(acme, 'globex'))).toEqual({
      code: 'forbidden.client',
      message: 'Access to this client is not allowed',
    });
    expect(() => assertClientAllowed(acme, 'acme')).not.toThrow();
    expect(() => assertClientAllowed(admin, null)).not.toThrow();
  });

  it('an unsafe URL is invalid.webhook_url; only an admin learns the refused address', async () => {
    expect(await refusal(() => assertSafeUrl(deps.webhooks, acme, 'http://receiver.test/'))).toEqual({
      code: 'invalid.webhook_url',
      message: 'url must use https',
    });
    expect(await refusal(() => assertSafeUrl(deps.webhooks, admin, 'https://internal.test/'))).toEqual({
      code: 'invalid.webhook_url',
      message: 'url is not allowed: 10.0.0.1 is not a public address (private)',
    });
    expect(await refusal(() => assertSafeUrl(deps.webhooks, acme, 'https://internal.test/'))).toEqual({
      code: 'invalid.webhook_url',
      message: HOST_REFUSED,
    });
    expect(await assertSafeUrl(deps.webhooks, acme, 'HTTPS://Receiver.TEST:443/x#frag')).toBe(
      'https://receiver.test/x',
    );
  });
});

function refusalOfSync(fn: () => void): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return { code: (err as DomainError).code, message: (err as DomainError).message };
  }
  throw new Error('expected a DomainError');
}

describe('subscriptions', () => {
  it('a client keeps at most SVC_WEBHOOK_MAX_PER_CLIENT subscriptions and no URL twice, also when one moves in', async () => {
    await createSubscription(deps, acme, body('https://receiver.test/1'));
    expect(await refusal(() => createSubscription(deps, acme, body('https://RECEIVER.test/1#x')))).toEqual({
      code: 'conflict.webhook_url_taken',
      message: 'A subscription with this URL already exists for this client',
    });
    await createSubscription(deps, acme, body('https://receiver.test/2'));
    const full = {
      code: 'conflict.webhook_limit',
      message: `This client already has ${MAX} webhook subscriptions, the most allowed`,
    };
    expect(await refusal(() => createSubscription(deps, acme, body('https://receiver.test/3')))).toEqual(full);
    const { row: elsewhere } = await createSubscription(deps, admin, body('https://receiver.test/3', 'globex'));
    expect(await refusal(() => changeSubscription(deps, admin, elsewhere.id, { client_id: 'acme' }))).toEqual(full);
    // One clock for all: created_at ties, and the id (random) orders them.
    expect((await listSubscriptions(db, acme)).map((s) => s.url).sort()).toEqual([
      'https://receiver.test/1',
      'https://receiver.test/2',
    ]);
    expect(await listSubscriptions(db, user(false, []))).toEqual([]);
    expect(await listSubscriptions(db, admin)).toHaveLength(3);
  });

  it('enabled:true re-enables and clears the failure streak; a removed subscription takes its log with it', async () => {
    const { row } = await createSubscription(deps, acme, body('https://receiver.test/r'));
    await db
      .updateTable('webhook_subscriptions')
      .set({
        enabled: false,
        consecutive_failures: 20,
        disabled_reason: 'Disabled after 20 consecutive failed deliveries',
      })
      .where('id', '=', row.id)
      .execute();
    const changed = await changeSubscription(deps, acme, row.id, { enabled: true });
    expect(changed).toMatchObject({ enabled: true, consecutive_failures: 0, disabled_reason: null });
    await logDelivery(row.id, 'acme');
    expect(await listDeliveries(db, acme, row.id, 10)).toHaveLength(1);
    await removeSubscription(db, acme, row.id);
    expect(await refusal(() => listDeliveries(db, admin, row.id, 10))).toEqual({
      code: 'not_found.webhook_subscription',
      message: 'Subscription not found',
    });
    expect(
      await db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', row.id).execute(),
    ).toEqual([]);
  });
});
