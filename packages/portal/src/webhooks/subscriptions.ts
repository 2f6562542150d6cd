import type { Kysely } from 'kysely';
import type { CreateWebhookBody, UpdateWebhookBody } from '@svc/protocol';
import { actorOf, type UserPrincipal } from '../auth/principal.ts';
import type { Database } from '../db/schema.ts';
import { assertClientAllowed, assertSafeUrl, subscriptionFor, type UrlChecks } from './access.ts';
import { newSigningSecret, newSubscriptionId } from './ids.ts';
import type { SubscriptionRow } from './present.ts';
import { deleteSubscription, insertSubscription, selectSubscriptions, updateSubscription } from './queries.ts';
import type { WebhookSecrets } from './secrets.ts';
import { withinClientLimits } from './subscription-limits.ts';

/** What changing subscriptions needs: the database, the clock, the URL checks and the per-client cap. */
export interface SubscriptionDeps {
  db: Kysely<Database>;
  now: () => Date;
  webhooks: UrlChecks & { secrets: WebhookSecrets };
  config: { webhooks: { maxPerClient: number } };
}

/** The subscriptions the user may manage: all for an admin, those of its clients otherwise. */
export function listSubscriptions(db: Kysely<Database>, user: UserPrincipal): Promise<SubscriptionRow[]> {
  return selectSubscriptions(db, user.admin ? null : (user.clientIds ?? []));
}

/** docs/api.md#webhooks: a new subscription and its signing secret, which is answered once. */
export async function createSubscription(
  deps: SubscriptionDeps,
  user: UserPrincipal,
  body: CreateWebhookBody,
): Promise<{ row: SubscriptionRow; secret: string }> {
  const clientId = body.client_id ?? null;
  assertClientAllowed(user, clientId);
  const url = await assertSafeUrl(deps.webhooks, user, body.url);
  const secret = newSigningSecret();
  const id = newSubscriptionId();
  const now = deps.now();
  const slot = { clientId, url, ownId: null, counts: true, max: deps.config.webhooks.maxPerClient };
  const row = await withinClientLimits(deps.db, slot, (trx) =>
    insertSubscription(trx, {
      id,
      url,
      event_types: body.event_types,
      signing_secret: null,
      signing_secret_encrypted: deps.webhooks.secrets.seal(id, secret),
      enabled: body.enabled ?? true,
      description: body.description ?? null,
      client_id: clientId,
      created_by: actorOf(user),
      created_at: now,
      updated_at: now,
      disabled_reason: null,
    }),
  );
  return { row, secret };
}

/**
 * A partial update; a new URL is checked again. enabled:true is the operator's "try again": it
 * re-enables a disabled subscription and starts the failure count afresh (also on an enabled one).
 */
export async function changeSubscription(
  deps: SubscriptionDeps,
  user: UserPrincipal,
  id: string,
  body: UpdateWebhookBody,
): Promise<SubscriptionRow> {
  const current = await subscriptionFor(deps.db, user, id);
  if (body.client_id !== undefined) assertClientAllowed(user, body.client_id);
  const url = body.url === undefined ? undefined : await assertSafeUrl(deps.webhooks, user, body.url);
  const reenabled = body.enabled === true;
  const clientId = body.client_id === undefined ? current.client_id : body.client_id;
  const moved = clientId !== current.client_id;
  const changes = {
    ...(url !== undefined ? { url } : {}),
    ...(body.event_types !== undefined ? { event_types: body.event_types } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.client_id !== undefined ? { client_id: body.client_id } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    ...(reenabled ? { consecutive_failures: 0, disabled_reason: null } : {}),
  };
  // Only a new URL or client can break the per-client limits; other changes need no lock.
  if (url === undefined && !moved)
    return updateSubscription(deps.db, current.id, { ...changes, updated_at: deps.now() });
  const slot = {
    clientId,
    url: url ?? current.url,
    ownId: current.id,
    counts: moved,
    max: deps.config.webhooks.maxPerClient,
  };
  return withinClientLimits(deps.db, slot, (trx) =>
    updateSubscription(trx, current.id, { ...changes, updated_at: deps.now() }),
  );
}

/** The subscription goes with its delivery log. */
export async function removeSubscription(db: Kysely<Database>, user: UserPrincipal, id: string): Promise<void> {
  const sub = await subscriptionFor(db, user, id);
  await deleteSubscription(db, sub.id);
}
