import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { PING_EVENT, WEBHOOK_API_VERSION, WEBHOOK_EVENT_TYPES, type WebhookDelivery, type WebhookEnvelope } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import type { Database } from '../db/schema.ts';
import type { DomainEvent } from '../events/bus.ts';
import type { WebhookHttpClient } from './http-client.ts';
import { DeliveryLog, type NewDelivery } from './delivery-log.ts';
import { newEventId, presentDelivery, type AttemptRow, type DeliveryRow, type SubscriptionRow } from './present.ts';
import { deliveryHeaders } from './signing.ts';

export const RETRY_DELAY_MS = 500;
const EVENT_TYPES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

/** What delivering to a subscription needs of it. */
type Target = Pick<SubscriptionRow, 'id' | 'url' | 'signing_secret'>;

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
  readonly #log: DeliveryLog;

  constructor(deps: DispatcherDeps) {
    this.#d = deps;
    this.#log = new DeliveryLog(deps.db, deps.logger);
  }

  async onEvent(event: DomainEvent): Promise<void> {
    if (!EVENT_TYPES.has(event.event_type)) return;
    const subs = await this.#d.db
      .selectFrom('webhook_subscriptions')
      .select(['id', 'url', 'signing_secret'])
      .where('enabled', '=', true)
      .where(sql<boolean>`${event.event_type} = ANY(event_types)`)
      .where((eb) => eb.or([eb('client_id', 'is', null), eb('client_id', '=', event.client_id)]))
      .execute();
    if (subs.length === 0) return;
    const envelope: WebhookEnvelope = { api_version: WEBHOOK_API_VERSION, event_type: event.event_type, event_id: newEventId(), timestamp: event.created_at, data: event.data };
    const body = JSON.stringify(envelope);
    // The pending rows are written while the first attempts are on their way: the log entry
    // is not needed to post (X-SVC-Delivery is the event id), and its commit would otherwise
    // add a WAL flush to every event's delivery latency. Outcomes wait for it.
    const opened = this.#log.open(
      subs.map((sub) => ({ subscription_id: sub.id, event_id: envelope.event_id, event_type: envelope.event_type, body, redelivery_of: null })),
      this.#d.now(),
    );
    opened.catch(() => undefined); // awaited below; this only keeps an early failure from being reported as unhandled
    await Promise.all(subs.map((sub, i) => this.#send(sub, envelope.event_id, envelope.event_type, body, opened.then((rows) => rows[i] as DeliveryRow))));
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
    return this.#deliverOne(sub, { subscription_id: sub.id, event_id: envelope.event_id, event_type: PING_EVENT, body: JSON.stringify(envelope), redelivery_of: null });
  }

  /** Send a logged delivery again: the same body and event id, so receivers can de-duplicate. */
  redeliver(sub: SubscriptionRow, original: { id: string; event_id: string; event_type: string; body: string }): Promise<WebhookDelivery> {
    return this.#deliverOne(sub, { subscription_id: sub.id, event_id: original.event_id, event_type: original.event_type, body: original.body, redelivery_of: original.id });
  }

  async #deliverOne(sub: SubscriptionRow, entry: NewDelivery): Promise<WebhookDelivery> {
    const [opened] = await this.#log.open([entry], this.#d.now());
    const { delivery, attempts } = await this.#send(sub, entry.event_id, entry.event_type, entry.body, Promise.resolve(opened as DeliveryRow));
    return presentDelivery(delivery, attempts);
  }

  /** One attempt and, if it fails, one retry; then the outcome and the log (once its row exists). */
  async #send(sub: Target, eventId: string, eventType: string, body: string, opened: Promise<DeliveryRow>): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] }> {
    const { client, now } = this.#d;
    const tries: Omit<AttemptRow, 'delivery_id'>[] = [];
    let ok = false;
    for (let attempt = 1; attempt <= 2 && !ok; attempt++) {
      if (attempt === 2) await sleep(RETRY_DELAY_MS);
      const at = now();
      const result = await client.post(sub.url, deliveryHeaders(sub.signing_secret, eventType, eventId, body, Math.floor(at.getTime() / 1000)), body);
      ok = result.error === null;
      tries.push({ attempt, status_code: result.statusCode, duration_ms: result.durationMs, error: result.error, attempted_at: at });
    }
    const delivery = await opened;
    const attempts: AttemptRow[] = tries.map((t) => ({ delivery_id: delivery.id, ...t }));
    const status = ok ? 'succeeded' : 'failed';
    // A failure counts (and may disable the subscription) before the delivery reads as
    // finished; a success ends the streak in the same statement that finishes it.
    if (!ok) await this.#recordFailure(sub);
    await this.#log.finish({ deliveryId: delivery.id, status, attempts, resetSubscription: ok ? sub.id : null });
    return { delivery: { ...delivery, status }, attempts };
  }

  async #recordFailure(sub: Target): Promise<void> {
    const { db, disableAfterFailures, logger } = this.#d;
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
