import type { Selectable } from 'kysely';
import type { WebhookDelivery, WebhookSubscription } from '@svc/protocol';
import type { WebhookDeliveriesTable, WebhookSubscriptionsTable } from '../db/schema.ts';
import { standardWebhooksSecret } from './signing.ts';

export type SubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

/** Never the signing secret. */
export function presentSubscription(row: SubscriptionRow): WebhookSubscription {
  return {
    id: row.id,
    url: row.url,
    event_types: row.event_types,
    enabled: row.enabled,
    description: row.description,
    client_id: row.client_id,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    consecutive_failures: row.consecutive_failures,
    disabled_reason: row.disabled_reason,
  };
}

/** The answer to a creation: the only one that carries the signing secret, also in its `whsec_` form. */
export function presentCreatedSubscription(row: SubscriptionRow, secret: string) {
  return {
    ...presentSubscription(row),
    signing_secret: secret,
    standard_webhooks_secret: standardWebhooksSecret(secret),
  };
}

/** The delivery log entry: attempts with status code, duration and error; never a response body. */
export function presentDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: Number(row.id),
    subscription_id: row.subscription_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    redelivery_of: row.redelivery_of === null ? null : Number(row.redelivery_of),
    created_at: row.created_at.toISOString(),
    attempts: row.attempts,
    runs: row.runs,
  };
}

/**
 * What a non-admin is told of a failed attempt: `HTTP <status>`, `timeout`, `TLS error`,
 * `not sent` or `connection failed` (and why a delivery was abandoned, as is). The full text (an address a host resolved to, a
 * certificate's names, a socket error) would let a tenant map the portal's network through
 * URLs of its choice; admins see it unchanged.
 */
export function coarseError(error: string | null): string | null {
  if (error === null) return null;
  if (/^HTTP \d{3}$/.test(error)) return error;
  if (error.startsWith('timeout')) return 'timeout';
  if (error.startsWith('not sent:')) return 'not sent';
  // The portal's own words (ABANDONED_REASONS), naming nothing of the network.
  if (error.startsWith('abandoned:')) return error;
  if (
    /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)|\b(SSL|TLS)\b|certificate/i.test(
      error,
    )
  )
    return 'TLS error';
  return 'connection failed';
}

/**
 * A delivery as the caller may see it. For non-admins the attempts' errors are coarse and their
 * durations withheld (null): a refused connection answers in one round trip, a port that
 * accepts and then fails in more, so timings would map which public hosts and ports are open.
 */
export function presentForCaller(caller: { admin: boolean }, delivery: WebhookDelivery): WebhookDelivery {
  if (caller.admin) return delivery;
  return {
    ...delivery,
    attempts: delivery.attempts.map((a) => ({ ...a, duration_ms: null, error: coarseError(a.error) })),
  };
}
