import { inScope, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { badRequest, conflict, forbidden, HttpError, notFound } from '../http/errors.ts';
import type { DeliveryRow, SubscriptionRow } from './present.ts';
import { checkedAddresses, parseWebhookUrl, UnsafeUrlError } from './url-safety.ts';

/**
 * Subscriptions are scoped like everything else: an admin manages all of them; a scoped
 * user (with the webhooks permission) only those bound to one of its client ids, and it
 * cannot create one without a client_id, which would receive every tenant's events.
 */
export async function subscriptionFor(ctx: AppContext, user: UserPrincipal, id: string): Promise<SubscriptionRow> {
  const row = await ctx.db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row || (!user.admin && !inScope(user, row.client_id))) throw notFound('Subscription not found');
  return row;
}

/**
 * A logged delivery the caller may see now: one of a subscription it manages whose event
 * belongs to a client in its scope. The delivery's own client decides, not the
 * subscription's, which an admin may have moved to another client since. Anything else is
 * the same 404 as a missing delivery.
 */
export async function deliveryFor(
  ctx: AppContext,
  user: UserPrincipal,
  id: number,
): Promise<{ delivery: DeliveryRow; subscription: SubscriptionRow }> {
  // Ids are bigserial: a number past 2^53 cannot name one and must not reach SQL as a float literal.
  const delivery = Number.isSafeInteger(id)
    ? await ctx.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', String(id)).executeTakeFirst()
    : undefined;
  if (!delivery || (!user.admin && !inScope(user, delivery.client_id))) throw notFound('Delivery not found');
  const subscription = await subscriptionFor(ctx, user, delivery.subscription_id).catch((err: unknown) => {
    throw err instanceof HttpError && err.statusCode === 404 ? notFound('Delivery not found') : err;
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
    throw conflict('This delivery belongs to another client than its subscription has now; it cannot be redelivered');
  }
}

export function assertClientAllowed(user: UserPrincipal, clientId: string | null): void {
  if (user.admin) return;
  if (clientId === null) throw forbidden("A subscription without client_id receives every client's events: admin only");
  if (!inScope(user, clientId)) throw forbidden('Access to this client is not allowed');
}

/**
 * The URL rules, checked at creation and update (and again by the delivery client). Answers
 * the normalised URL that is stored and compared for duplicates. Only an admin is told which
 * address a refused host resolved to: to anyone else that would be an oracle of the portal's
 * internal DNS.
 */
export async function assertSafeUrl(ctx: AppContext, user: UserPrincipal, raw: string): Promise<string> {
  try {
    const url = parseWebhookUrl(raw);
    await checkedAddresses(url, ctx.webhooks.resolver, ctx.webhooks.allow);
    return url.toString();
  } catch (err) {
    if (err instanceof UnsafeUrlError) throw badRequest(user.admin ? err.message : err.coarse);
    throw err;
  }
}
