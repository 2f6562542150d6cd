import type { Logger } from 'pino';
import type { AuditEvent } from '@svc/protocol';

/**
 * What subscribers receive: an audit event as recorded, or an event that is not audited
 * (such as `report_expiring`), which has no audit id.
 */
export interface DomainEvent extends Omit<AuditEvent, 'id' | 'event_type'> {
  id?: number;
  event_type: AuditEvent['event_type'] | 'report_expiring';
  /**
   * Fields of `data` that subscribers get in clear but that are stored only sealed (the audit
   * row and the delivery log keep `data`'s redacted value): scan_completed's share link.
   */
  secret_data?: Record<string, unknown>;
  /** Its row in webhook_outbox when it is not audited (an audited event's row goes by its `id`). */
  outbox_id?: string;
}

export type EventListener = (event: DomainEvent) => void | Promise<void>;

/**
 * The internal event module: operations record their audit event inside their
 * transaction, then publish it here after commit. Subscribers (webhook delivery) run
 * detached: a slow or failing subscriber never fails or delays the triggering request.
 */
export class EventBus {
  readonly #listeners = new Set<EventListener>();
  readonly #logger: Logger;
  readonly #pending = new Set<Promise<void>>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(event: DomainEvent): void {
    for (const listener of this.#listeners) {
      const task = Promise.resolve()
        .then(() => listener(event))
        .catch((err: unknown) => this.#logger.error({ err, event_type: event.event_type }, 'event subscriber failed'))
        .finally(() => this.#pending.delete(task));
      this.#pending.add(task);
    }
  }

  /** Wait for subscribers already running (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }
}
