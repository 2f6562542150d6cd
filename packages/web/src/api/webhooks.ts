import type { Static } from '@sinclair/typebox';
import type {
  CreatedWebhookResponse,
  CreateWebhookBody,
  DeliveriesResponse,
  DeliveryResponse,
  OkBody,
  UpdateWebhookBody,
  WebhookListResponse,
  WebhookResponse,
} from '@svc/protocol';
import { apiRequest } from './client.ts';

/** Webhook subscriptions and their deliveries (docs/api.md#webhooks). */

export type CreatedWebhook = Static<typeof CreatedWebhookResponse>['subscription'];
type Delivery = Static<typeof DeliveryResponse>;

export function listWebhooks(): Promise<Static<typeof WebhookListResponse>> {
  return apiRequest('GET', '/api/webhooks');
}

/** POST /api/webhooks: a subscription; the answer holds its signing secret, shown once. */
export function createWebhook(body: CreateWebhookBody): Promise<Static<typeof CreatedWebhookResponse>> {
  return apiRequest('POST', '/api/webhooks', { body });
}

export function updateWebhook(id: string, body: UpdateWebhookBody): Promise<Static<typeof WebhookResponse>> {
  return apiRequest('PATCH', '/api/webhooks', { query: { id }, body });
}

export function deleteWebhook(id: string): Promise<OkBody> {
  return apiRequest('DELETE', '/api/webhooks', { query: { id } });
}

/** POST /api/webhooks/ping?id=: one test delivery, sent at once; the answer is its outcome. */
export function pingWebhook(id: string): Promise<Delivery> {
  return apiRequest('POST', '/api/webhooks/ping', { query: { id } });
}

/** GET /api/webhooks/deliveries: the subscription's newest deliveries, at most `limit`. */
export function listDeliveries(id: string, limit: number): Promise<Static<typeof DeliveriesResponse>> {
  return apiRequest('GET', '/api/webhooks/deliveries', { query: { id, limit } });
}

/** POST /api/webhooks/redeliver: the same event sent again, as a new delivery. */
export function redeliverWebhook(deliveryId: number): Promise<Delivery> {
  return apiRequest('POST', '/api/webhooks/redeliver', { body: { delivery_id: deliveryId } });
}
