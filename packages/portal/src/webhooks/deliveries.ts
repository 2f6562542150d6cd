import type { Kysely } from 'kysely';
import type { WebhookDelivery } from '@svc/protocol';
import { actorOf, scopeOf, type UserPrincipal } from '../auth/principal.ts';
import type { Database } from '../db/schema.ts';
import { assertRedeliverable, deliveryFor, subscriptionFor } from './access.ts';
import type { WebhookDispatcher } from './dispatcher.ts';
import { presentDelivery } from './present.ts';
import { selectDeliveries } from './queries.ts';

/** A subscription's log, newest first: a scoped user sees only the deliveries of events of its clients. */
export async function listDeliveries(
  db: Kysely<Database>,
  user: UserPrincipal,
  subscriptionId: string,
  limit: number,
): Promise<WebhookDelivery[]> {
  const sub = await subscriptionFor(db, user, subscriptionId);
  const rows = await selectDeliveries(db, sub.id, user.admin ? null : scopeOf(user), limit);
  return rows.map(presentDelivery);
}

/** What sending a delivery now needs: the database and the dispatcher that sends and logs it. */
export interface SendDeps {
  db: Kysely<Database>;
  webhooks: { dispatcher: WebhookDispatcher };
}

/** A signed `ping` to the subscription now, enabled or not; answers its logged outcome. */
export async function pingSubscription(
  deps: SendDeps,
  user: UserPrincipal,
  subscriptionId: string,
): Promise<WebhookDelivery> {
  const sub = await subscriptionFor(deps.db, user, subscriptionId);
  return deps.webhooks.dispatcher.ping(sub, actorOf(user));
}

/** A logged delivery sent again (same body and event id) to its subscription's URL of today. */
export async function redeliver(deps: SendDeps, user: UserPrincipal, deliveryId: number): Promise<WebhookDelivery> {
  const { delivery, subscription } = await deliveryFor(deps.db, user, deliveryId);
  assertRedeliverable(delivery, subscription);
  return deps.webhooks.dispatcher.redeliver(subscription, delivery);
}
