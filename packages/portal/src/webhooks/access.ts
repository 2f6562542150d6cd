import { inScope, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { badRequest, forbidden, notFound } from '../errors.ts';
import type { SubscriptionRow } from './present.ts';
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

export function assertClientAllowed(user: UserPrincipal, clientId: string | null): void {
  if (user.admin) return;
  if (clientId === null) throw forbidden('A subscription without client_id receives every client\'s events: admin only');
  if (!inScope(user, clientId)) throw forbidden('Access to this client is not allowed');
}

/** The URL rules, checked at creation and update (and again by the delivery client). */
export async function assertSafeUrl(ctx: AppContext, raw: string): Promise<string> {
  try {
    const url = parseWebhookUrl(raw);
    await checkedAddresses(url, ctx.webhooks.resolver, ctx.webhooks.allow);
    return url.toString();
  } catch (err) {
    if (err instanceof UnsafeUrlError) throw badRequest(err.message);
    throw err;
  }
}
