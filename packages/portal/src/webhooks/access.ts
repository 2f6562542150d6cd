import type { Kysely } from 'kysely';
import { inScope, type UserPrincipal } from '../auth/principal.ts';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import type { DeliveryRow, SubscriptionRow } from './present.ts';
import { selectDelivery, selectSubscription } from './queries.ts';
import { type CidrList, checkedAddresses, parseWebhookUrl, type Resolver, UnsafeUrlError } from './url-safety.ts';

const subscriptionNotFound = () => new DomainError('not_found.webhook_subscription', 'Subscription not found');
const deliveryNotFound = () => new DomainError('not_found.webhook_delivery', 'Delivery not found');

/**
 * Subscriptions are scoped like everything else: an admin manages all of them, a scoped user
 * only those bound to one of its client ids. One out of scope is as missing as one that is not.
 */
export async function subscriptionFor(db: Kysely<Database>, user: UserPrincipal, id: string): Promise<SubscriptionRow> {
  const row = await selectSubscription(db, id);
  if (!row || (!user.admin && !inScope(user, row.client_id))) throw subscriptionNotFound();
  return row;
}

/**
 * A logged delivery the caller may see now: one of a subscription it manages whose event
 * belongs to a client in its scope. The delivery's own client decides, not the
 * subscription's, which an admin may have moved to another client since. Anything else is
 * the same 404 as a missing delivery.
 */
export async function deliveryFor(
  db: Kysely<Database>,
  user: UserPrincipal,
  id: number,
): Promise<{ delivery: DeliveryRow; subscription: SubscriptionRow }> {
  // Ids are bigserial: a number past 2^53 cannot name one and must not reach SQL as a float literal.
  const delivery = Number.isSafeInteger(id) ? await selectDelivery(db, String(id)) : undefined;
  if (!delivery || (!user.admin && !inScope(user, delivery.client_id))) throw deliveryNotFound();
  const subscription = await subscriptionFor(db, user, delivery.subscription_id).catch((err: unknown) => {
    throw err instanceof DomainError && err.code === 'not_found.webhook_subscription' ? deliveryNotFound() : err;
  });
  return { delivery, subscription };
}

/**
 * A redelivery goes to the subscription's URL of today: only when that subscription would
 * receive the event now (no client_id, or the event's), so an admin's redelivery after a
 * re-scope cannot send one client's event to another's receiver.
 */
export function assertRedeliverable(delivery: DeliveryRow, subscription: SubscriptionRow): void {
  if (subscription.client_id !== null && subscription.client_id !== delivery.client_id) {
    throw new DomainError(
      'conflict.webhook_delivery_moved',
      'This delivery belongs to another client than its subscription has now; it cannot be redelivered',
    );
  }
}

/** A subscription without client_id would receive every tenant's events: only an admin may have one. */
export function assertClientAllowed(user: UserPrincipal, clientId: string | null): void {
  if (user.admin) return;
  if (clientId === null)
    throw new DomainError(
      'forbidden.webhook_all_clients',
      "A subscription without client_id receives every client's events: admin only",
    );
  if (!inScope(user, clientId)) throw new DomainError('forbidden.client', 'Access to this client is not allowed');
}

/** How webhook URLs are checked: the resolver and the private ranges an operator allowed. */
export interface UrlChecks {
  resolver: Resolver;
  allow: CidrList;
}

/**
 * The URL rules, checked at creation and update (and again by the delivery client). Answers
 * the normalised URL that is stored and compared for duplicates. Only an admin is told which
 * address a refused host resolved to: to anyone else that would be an oracle of the portal's
 * internal DNS.
 */
export async function assertSafeUrl(checks: UrlChecks, user: UserPrincipal, raw: string): Promise<string> {
  try {
    const url = parseWebhookUrl(raw);
    await checkedAddresses(url, checks.resolver, checks.allow);
    return url.toString();
  } catch (err) {
    if (err instanceof UnsafeUrlError)
      throw new DomainError('invalid.webhook_url', user.admin ? err.message : err.coarse);
    throw err;
  }
}
