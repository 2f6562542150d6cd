import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { PING_EVENT, WEBHOOK_API_VERSION, WEBHOOK_EVENT_TYPES, type WebhookDelivery, type WebhookEnvelope } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import type { Database } from '../db/schema.ts';
import type { DomainEvent } from '../events/bus.ts';
import type { WebhookHttpClient } from './http-client.ts';
import { newEventId, presentDelivery, type SubscriptionRow } from './present.ts';
import { deliveryHeaders } from './signing.ts';

export const RETRY_DELAY_MS = 500;
const EVENT_TYPES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

export interface DispatcherDeps {
  db: Kysely<Database>;
  logger: Logger;
  client: WebhookHttpClient;
  now: () => Date;
  disableAfterFailures: number;
}

/**
 * Outgoing webhooks (SPEC "Webhook delivery"). Subscribed to the event bus, so it runs
 * after the triggering operation has committed and never delays or fails it. Every
 * matching subscriber (enabled, listening to the event type, and with a matching
 * client_id when it has one) is delivered in parallel: one attempt, and one retry after
 * 500 ms, each with a 5 s timeout. Every attempt is logged. A subscription whose
 * deliveries fail `disableAfterFailures` times in a row is disabled and audited.
 */
export class WebhookDispatcher {
  readonly #d: DispatcherDeps;

  constructor(deps: DispatcherDeps) {
    this.#d = deps;
  }

  async onEvent(event: DomainEvent): Promise<void> {
    if (!EVENT_TYPES.has(event.event_type)) return;
    const subs = await this.#d.db
      .selectFrom('webhook_subscriptions')
      .selectAll()
      .where('enabled', '=', true)
      .where(sql<boolean>`${event.event_type} = ANY(event_types)`)
      .where((eb) => eb.or([eb('client_id', 'is', null), eb('client_id', '=', event.client_id)]))
      .execute();
    if (subs.length === 0) return;
    const envelope: WebhookEnvelope = { api_version: WEBHOOK_API_VERSION, event_type: event.event_type, event_id: newEventId(), timestamp: event.created_at, data: event.data };
    const body = JSON.stringify(envelope);
    await Promise.all(subs.map((sub) => this.#deliver(sub, envelope.event_id, envelope.event_type, body, null)));
  }

  /** An on-demand test delivery to one subscription (enabled or not). */
  ping(sub: SubscriptionRow, actor: string): Promise<WebhookDelivery> {
    const envelope: WebhookEnvelope = {
      api_version: WEBHOOK_API_VERSION,
      event_type: PING_EVENT,
      event_id: newEventId(),
      timestamp: this.#d.now().toISOString(),
      data: { subscription_id: sub.id, requested_by: actor, message: 'Test delivery from the portal' },
    };
    return this.#deliver(sub, envelope.event_id, PING_EVENT, JSON.stringify(envelope), null);
  }

  /** Send a logged delivery again: the same body and event id, so receivers can de-duplicate. */
  redeliver(sub: SubscriptionRow, original: { id: string; event_id: string; event_type: string; body: string }): Promise<WebhookDelivery> {
    return this.#deliver(sub, original.event_id, original.event_type, original.body, original.id);
  }

  async #deliver(sub: SubscriptionRow, eventId: string, eventType: string, body: string, redeliveryOf: string | null): Promise<WebhookDelivery> {
    const { db, client, now } = this.#d;
    const delivery = await db
      .insertInto('webhook_deliveries')
      .values({ subscription_id: sub.id, event_id: eventId, event_type: eventType, body, redelivery_of: redeliveryOf, created_at: now() })
      .returningAll()
      .executeTakeFirstOrThrow();
    const attempts = [];
    let ok = false;
    for (let attempt = 1; attempt <= 2 && !ok; attempt++) {
      if (attempt === 2) await sleep(RETRY_DELAY_MS);
      const at = now();
      const result = await client.post(sub.url, deliveryHeaders(sub.signing_secret, eventType, eventId, body, Math.floor(at.getTime() / 1000)), body);
      ok = result.error === null;
      const row = await db
        .insertInto('webhook_delivery_attempts')
        .values({ delivery_id: delivery.id, attempt, status_code: result.statusCode, duration_ms: result.durationMs, error: result.error, attempted_at: at })
        .returningAll()
        .executeTakeFirstOrThrow();
      attempts.push(row);
    }
    const status = ok ? 'succeeded' : 'failed';
    // The subscription's failure count first: a delivery that reads as finished has
    // already counted (readers of the log and of the subscription never disagree).
    await this.#recordOutcome(sub, ok);
    await db.updateTable('webhook_deliveries').set({ status }).where('id', '=', delivery.id).execute();
    return presentDelivery({ ...delivery, status }, attempts);
  }

  async #recordOutcome(sub: SubscriptionRow, ok: boolean): Promise<void> {
    const { db, disableAfterFailures, logger } = this.#d;
    if (ok) {
      if (sub.consecutive_failures === 0) return;
      await db.updateTable('webhook_subscriptions').set({ consecutive_failures: 0 }).where('id', '=', sub.id).where('consecutive_failures', '>', 0).execute();
      return;
    }
    const disabled = await db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('webhook_subscriptions')
        .set({ consecutive_failures: sql`consecutive_failures + 1` })
        .where('id', '=', sub.id)
        .returning(['consecutive_failures', 'enabled', 'client_id', 'url'])
        .executeTakeFirst();
      if (!row || !row.enabled || row.consecutive_failures < disableAfterFailures) return false;
      const reason = `Disabled after ${row.consecutive_failures} consecutive failed deliveries`;
      await trx.updateTable('webhook_subscriptions').set({ enabled: false, disabled_reason: reason, updated_at: this.#d.now() }).where('id', '=', sub.id).execute();
      await recordAuditEvent(trx, { event_type: 'webhook_disabled', actor: 'system', client_id: row.client_id, data: { subscription_id: sub.id, url: row.url, reason } });
      return true;
    });
    if (disabled) logger.warn({ subscription_id: sub.id }, 'webhook subscription disabled after repeated failures');
  }
}
