import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import {
  PING_EVENT,
  WEBHOOK_API_VERSION,
  WEBHOOK_EVENT_TYPES,
  type DeliveryAttempt,
  type WebhookDelivery,
  type WebhookEnvelope,
} from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import { presentAuditEvent } from '../audit/present.ts';
import type { DomainEvent } from '../events/bus.ts';
import type { WebhookHttpClient } from './http-client.ts';
import { DeliveryLog, type DeliveryMessage, type NewDelivery } from './delivery-log.ts';
import { newEventId } from './ids.ts';
import type { ExpiredDelivery } from './lease-queries.ts';
import { DeliveryLeases, newOwner } from './leases.ts';
import { dropStaged, type OutboxClaim, staleStaged } from './outbox-queries.ts';
import { type DeliveryRow, presentDelivery, type SubscriptionRow } from './present.ts';
import { selectSubscribers, type Target } from './queries.ts';
import { UndecryptableSecret, type WebhookSecrets } from './secrets.ts';
import { deliveryHeaders } from './signing.ts';

export const RETRY_DELAY_MS = 500;
const EVENT_TYPES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);
/** Staged events one sweep fans out, at most. */
const ADOPT_BATCH = 100;

/** Where an event is staged (migration 0036): an audited event by its audit id; null when it was not staged. */
function claimOf(event: DomainEvent): OutboxClaim | null {
  if (event.outbox_id !== undefined) return { outboxId: event.outbox_id };
  return event.id === undefined ? null : { auditId: event.id };
}

const stagedKey = (claim: OutboxClaim) => ('auditId' in claim ? `audit:${claim.auditId}` : `outbox:${claim.outboxId}`);

export interface DispatcherDeps {
  db: Kysely<Database>;
  logger: Logger;
  client: WebhookHttpClient;
  now: () => Date;
  disableAfterFailures: number;
  secrets: WebhookSecrets;
  /** Deliveries' leases (webhooks/leases.ts): their length, and runs before one is abandoned. */
  lease: { seconds: number; maxRuns: number; owner?: string };
  /** Told each delivery's outcome (the metrics); not sent means shed. */
  onOutcome?: ((outcome: 'delivered' | 'failed' | 'shed' | 'abandoned') => void) | undefined;
  /** An audited event as its subscribers get it, when a sweep sends it: its secrets put back (`secret_data`). */
  restore: (event: DomainEvent) => Promise<DomainEvent>;
}

/**
 * Outgoing webhooks (docs/api.md#webhooks). Subscribed to the event bus, so it runs
 * after the triggering operation has committed and never delays or fails it. Every
 * matching subscriber (enabled, listening to the event type, and with a matching
 * client_id when it has one) is delivered in parallel: one attempt, and one retry after
 * 500 ms, each with a 5 s timeout. Every attempt is logged. A subscription whose
 * deliveries fail `disableAfterFailures` times in a row is disabled and audited. Each
 * delivery holds a lease while it runs: one whose process died is taken over by a replica,
 * or ends `abandoned` (webhooks/leases.ts).
 */
export class WebhookDispatcher {
  readonly #d: DispatcherDeps;
  readonly #log: DeliveryLog;
  readonly leases: DeliveryLeases;
  #adopting: Promise<number> | null = null;

  constructor(deps: DispatcherDeps) {
    this.#d = deps;
    const owner = deps.lease.owner ?? newOwner();
    this.leases = new DeliveryLeases({
      ...deps,
      ...deps.lease,
      owner,
      resume: (delivery, run) => this.#resume(delivery, run),
      adopt: () => this.adoptStaged(),
      onAbandoned: () => deps.onOutcome?.('abandoned'),
    });
    this.#log = new DeliveryLog({ ...deps, lease: { owner, seconds: deps.lease.seconds } });
  }

  /** Renew leases and take over deliveries whose process stopped (webhooks/leases.ts). */
  start(): void {
    this.leases.start();
  }

  /** Shutdown, first: take over nothing more. */
  stopTakingOver(): void {
    this.leases.stopTakingOver();
  }

  /** Shutdown, once the event fan-outs drained: the deliveries taken over finish. */
  close(): Promise<void> {
    return this.leases.close();
  }

  /**
   * Fan an event out. Its subscribers are read only while it is staged (migration 0036); the
   * first attempts leave while one statement claims the staged row and writes the pending
   * deliveries, as a delivery never waits for its log row (X-SVC-Delivery is the event id).
   * Outcomes wait for that row. Nothing is sent for an event never staged (nobody listened when
   * it was recorded) or claimed already; a sweep fanning out an event a late fan-out is still
   * sending uses the same event id (WebhookSecrets.eventId), so a receiver de-duplicates it.
   */
  onEvent(event: DomainEvent): Promise<void> {
    return this.#fanOut(event, false);
  }

  /** `adopted`: a sweep's, which claims the staged row even when nobody listens any more. */
  async #fanOut(event: DomainEvent, adopted: boolean): Promise<void> {
    if (!EVENT_TYPES.has(event.event_type)) return;
    const claim = claimOf(event);
    if (claim === null) return;
    const subs = await selectSubscribers(this.#d.db, event, claim);
    if (subs.length === 0 && !adopted) return;
    const eventId = this.#d.secrets.eventId(`${stagedKey(claim)}:${event.created_at}`);
    const envelope = (data: Record<string, unknown>): string =>
      JSON.stringify({
        api_version: WEBHOOK_API_VERSION,
        event_type: event.event_type,
        event_id: eventId,
        timestamp: event.created_at,
        data,
      } satisfies WebhookEnvelope);
    const message: DeliveryMessage = {
      event_id: eventId,
      event_type: event.event_type,
      body: envelope(event.data),
      // The log keeps `data` as recorded (its secrets redacted); what is sent, only sealed.
      body_sealed:
        event.secret_data === undefined
          ? null
          : this.#d.secrets.sealBody(eventId, envelope({ ...event.data, ...event.secret_data })),
      client_id: event.client_id,
    };
    const opened = this.#log.openFanOut(
      message,
      subs.map((s) => s.id),
      this.#d.now(),
      claim,
    );
    // Renewed from the moment the rows exist until each outcome is written (or fails to be:
    // then the lease lapses and a sweep sends the delivery again).
    opened.then(
      (rows) => {
        for (const d of rows.values()) this.leases.hold(d.id);
      },
      () => undefined, // awaited below; this only keeps an early failure from being reported as unhandled
    );
    // A sweep's fan-out is in no hurry and sends only what its claim won: two sweeps (of two
    // replicas, or one after another while a claim is slow) can read one staged row.
    const won = adopted ? await opened : null;
    await Promise.all(
      subs.map(async (sub) => {
        if (won !== null && !won.has(sub.id)) return;
        try {
          const { ok, shed, attempts } = await this.#attempt(sub, message);
          const delivery = (await opened).get(sub.id);
          // No row: the subscription was deleted while the event was on its way (its log with
          // it), or another process claimed the event first and logs its own fan-out.
          if (delivery)
            await this.#log.finish({ deliveryId: delivery.id, subscriptionId: sub.id, run: 1, ok, shed, attempts });
        } finally {
          const delivery = await opened.then(
            (rows) => rows.get(sub.id),
            () => undefined,
          );
          if (delivery) this.leases.release(delivery.id);
        }
      }),
    );
    // With nobody to send to, the claim is all there is to wait for.
    if (subs.length === 0) await opened;
  }

  /**
   * Fan out events staged more than a lease ago and never claimed: the process that recorded
   * them stopped, or lost its database, before it sent them. Each goes on in the background, as
   * a published event does; a sweep already running is joined.
   */
  adoptStaged(): Promise<number> {
    this.#adopting ??= this.#adoptOnce()
      .catch((err: unknown) => {
        this.#d.logger.warn({ err }, 'sending staged webhook events failed');
        return 0;
      })
      .finally(() => (this.#adopting = null));
    return this.#adopting;
  }

  async #adoptOnce(): Promise<number> {
    const stale = await staleStaged(this.#d.db, this.#d.lease.seconds, ADOPT_BATCH);
    const gone: string[] = [];
    for (const row of stale) {
      let event: DomainEvent;
      if (row.event !== null) event = { ...row.event, outbox_id: row.id };
      else if (row.audit !== null) event = await this.#d.restore(presentAuditEvent(row.audit));
      else {
        gone.push(row.id);
        continue;
      }
      this.#d.logger.info(
        { event_type: event.event_type, audit_id: event.id ?? null },
        'webhook event taken over: the process that recorded it did not send it',
      );
      this.leases.track(this.#fanOut(event, true));
    }
    await dropStaged(this.#d.db, gone);
    return stale.length;
  }

  /** Run `run` of a delivery whose lease expired, to its subscription's URL of today. */
  async #resume(d: ExpiredDelivery, run: number): Promise<void> {
    const target = {
      id: d.subscription_id,
      url: d.url,
      signing_secret: d.signing_secret,
      signing_secret_encrypted: d.signing_secret_encrypted,
    };
    const { ok, shed, attempts } = await this.#attempt(target, d);
    await this.#log.finish({ deliveryId: d.id, subscriptionId: d.subscription_id, run, ok, shed, attempts });
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
    return this.#deliverOne(sub, {
      subscription_id: sub.id,
      event_id: envelope.event_id,
      event_type: PING_EVENT,
      body: JSON.stringify(envelope),
      body_sealed: null,
      redelivery_of: null,
      client_id: sub.client_id,
    });
  }

  /** Send a logged delivery again: the same body and event id, so receivers can de-duplicate; it keeps its event's client. */
  redeliver(
    sub: SubscriptionRow,
    original: Pick<DeliveryRow, 'id' | 'event_id' | 'event_type' | 'body' | 'body_sealed' | 'client_id'>,
  ): Promise<WebhookDelivery> {
    return this.#deliverOne(sub, {
      subscription_id: sub.id,
      event_id: original.event_id,
      event_type: original.event_type,
      body: original.body,
      body_sealed: original.body_sealed,
      redelivery_of: original.id,
      client_id: original.client_id,
    });
  }

  async #deliverOne(sub: SubscriptionRow, entry: NewDelivery): Promise<WebhookDelivery> {
    const delivery = await this.#log.open(entry, this.#d.now());
    this.leases.hold(delivery.id);
    // Whatever fails here (the outcome's write included) ends the renewals: the lease lapses and
    // a sweep sends the delivery again.
    let ok: boolean;
    let attempts: DeliveryAttempt[];
    try {
      let shed: boolean;
      ({ ok, shed, attempts } = await this.#attempt(sub, entry));
      // The failure streak (and the disabling it may bring) is written with the outcome.
      await this.#log.finish({ deliveryId: delivery.id, subscriptionId: sub.id, run: 1, ok, shed, attempts });
    } finally {
      this.leases.release(delivery.id);
    }
    return presentDelivery({ ...delivery, status: ok ? 'succeeded' : 'failed', attempts });
  }

  /**
   * One attempt and, if it fails, one retry 500 ms later. `shed`: neither attempt was sent
   * (the receiver's bulkhead turned both away), so the failure is not the receiver's.
   */
  async #attempt(
    sub: Target,
    message: DeliveryMessage,
  ): Promise<{ ok: boolean; shed: boolean; attempts: DeliveryAttempt[] }> {
    const { client, now } = this.#d;
    let secret: string;
    let body: string;
    try {
      secret = this.#d.secrets.open(sub);
      body = this.#d.secrets.bodyOf(message);
    } catch (err) {
      if (!(err instanceof UndecryptableSecret)) throw err;
      // Logged as a failed attempt: the admin sees why in the delivery log, nothing is sent unsigned.
      this.#d.logger.error({ subscription_id: sub.id }, err.message);
      const attempt = { attempt: 1, status_code: null, duration_ms: 0, error: `not sent: ${err.message}` };
      this.#d.onOutcome?.('failed');
      return { ok: false, shed: false, attempts: [{ ...attempt, attempted_at: now().toISOString() }] };
    }
    const attempts: DeliveryAttempt[] = [];
    let ok = false;
    let shed = true;
    for (let attempt = 1; attempt <= 2 && !ok; attempt++) {
      if (attempt === 2) await sleep(RETRY_DELAY_MS);
      // Signed when it leaves, after any wait in the receiver's queue; `at` is then that moment.
      let at = now();
      const signed = () => {
        at = now();
        return deliveryHeaders(secret, message.event_type, message.event_id, body, Math.floor(at.getTime() / 1000));
      };
      const result = await client.post(sub.url, signed, body);
      ok = result.error === null;
      shed &&= result.shed;
      attempts.push({
        attempt,
        status_code: result.statusCode,
        duration_ms: result.durationMs,
        error: result.error,
        attempted_at: at.toISOString(),
      });
    }
    this.#d.onOutcome?.(ok ? 'delivered' : shed ? 'shed' : 'failed');
    return { ok, shed: shed && !ok, attempts };
  }
}
