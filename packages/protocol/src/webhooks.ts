import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ClientId, IsoDateTime } from './common.ts';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** docs/api.md#webhooks: the ten subscribable events. */
export const WEBHOOK_EVENT_TYPES = [
  'scan_completed',
  'status_changed',
  'session_deleted',
  'report_expiring',
  'agent_deregistered',
  'agent_reregistered',
  'agent_purged',
  'command_dispatched',
  'command_completed',
  'command_failed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** The on-demand test delivery; never subscribable, always sent to the one subscription asked. */
export const PING_EVENT = 'ping';

export const WEBHOOK_API_VERSION = '2';
export const WEBHOOK_USER_AGENT = 'svc-portal-webhook/2.0';

/** The JSON body of every delivery (docs/api.md#webhooks). */
export const WebhookEnvelope = Type.Object({
  api_version: Type.Literal(WEBHOOK_API_VERSION),
  event_type: Type.String(),
  event_id: Type.String({ pattern: '^evt_[0-9a-f]{16}$' }),
  timestamp: IsoDateTime,
  data: Type.Record(Type.String(), Type.Unknown()),
});
export type WebhookEnvelope = Static<typeof WebhookEnvelope>;

const EventTypes = Type.Array(Type.Union(WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t))), {
  minItems: 1,
  uniqueItems: true,
});
const Url = Type.String({ minLength: 8, maxLength: 2048 });

export const WebhookSubscription = Type.Object({
  id: Type.String({ pattern: '^whsub_[0-9a-f]{12}$' }),
  url: Type.String(),
  event_types: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  description: Nullable(Type.String()),
  client_id: Nullable(Type.String()),
  created_by: Type.String(),
  created_at: IsoDateTime,
  updated_at: IsoDateTime,
  consecutive_failures: Type.Integer(),
  disabled_reason: Nullable(
    Type.String({ description: 'set when the portal disabled the subscription after repeated failures' }),
  ),
});
export type WebhookSubscription = Static<typeof WebhookSubscription>;

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    event_types: EventTypes,
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    client_id: Type.Optional(Nullable(ClientId)),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    event_types: Type.Optional(EventTypes),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    client_id: Type.Optional(Nullable(ClientId)),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const WebhookIdQuery = Type.Object({ id: Type.String({ maxLength: 64 }) }, { additionalProperties: false });
export const CreatedWebhookResponse = Type.Object({
  subscription: Type.Intersect([
    WebhookSubscription,
    Type.Object({
      signing_secret: Type.String({
        pattern: '^[0-9a-f]{64}$',
        description: 'shown only here; HMAC key of X-SVC-Signature-256',
      }),
      standard_webhooks_secret: Type.String({
        description: 'the same key as whsec_<base64>, for Standard Webhooks verifiers',
      }),
    }),
  ]),
});
export const WebhookResponse = Type.Object({ subscription: WebhookSubscription });
export const WebhookListResponse = Type.Object({ subscriptions: Type.Array(WebhookSubscription) });

export const DeliveryAttempt = Type.Object({
  attempt: Type.Integer(),
  status_code: Nullable(Type.Integer()),
  /** Null for non-admins: an attempt's duration tells an open port from a closed one. */
  duration_ms: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  attempted_at: IsoDateTime,
});
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;
/** A delivery's states: `pending` until one run records its outcome; `abandoned` when none could (docs/api.md#webhooks). */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'abandoned'] as const;
export const WebhookDelivery = Type.Object({
  id: Type.Integer(),
  subscription_id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  status: Type.Union(
    WEBHOOK_DELIVERY_STATUSES.map((s) => Type.Literal(s)),
    {
      description:
        '`pending` while on its way; `abandoned`: no run of it recorded an outcome (its replica stopped) SVC_WEBHOOK_MAX_RUNS times, or its subscription was disabled or moved to another client before it could be taken over',
    },
  ),
  redelivery_of: Nullable(Type.Integer()),
  created_at: IsoDateTime,
  attempts: Type.Array(DeliveryAttempt),
  runs: Type.Integer({
    minimum: 1,
    description:
      'times it was started: more than 1 when a replica took it over after the one sending it stopped (the same webhook-id and body each time)',
  }),
});
export type WebhookDelivery = Static<typeof WebhookDelivery>;
export const DeliveriesQuery = Type.Object(
  { id: Type.String({ maxLength: 64 }), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })) },
  { additionalProperties: false },
);
export const DeliveriesResponse = Type.Object({ deliveries: Type.Array(WebhookDelivery) });
export const RedeliverBody = Type.Object(
  { delivery_id: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
);
export const DeliveryResponse = Type.Object({ delivery: WebhookDelivery });

/** GET /api/db-health. */
export const DB_HEALTH_TABLES = [
  'sessions',
  'session_notes',
  'status_history',
  'share_tokens',
  'agent_heartbeats',
  'agents',
  'webhook_subscriptions',
  'webhooks',
  'audit_events',
] as const;
export const DbHealthResponse = Type.Object({
  table_counts: Type.Record(Type.String(), Type.Integer()),
  database_info: Type.Object({
    size_bytes: Type.Integer(),
    size_human: Type.String(),
    active_connections: Type.Integer(),
    host: Type.String(),
    version: Type.String(),
    database_name: Type.String(),
    max_connections: Type.Integer(),
    provider: Type.String(),
  }),
  recent_activity: Type.Array(
    Type.Object({
      event_type: Type.String(),
      session_id: Nullable(Type.String()),
      actor: Type.String(),
      data: Type.Record(Type.String(), Type.Unknown()),
      created_at: IsoDateTime,
      timestamp: IsoDateTime,
    }),
  ),
  session_stats: Type.Object({
    by_status: Type.Record(Type.String(), Type.Integer()),
    by_client: Type.Array(
      Type.Object({ client_id: Nullable(Type.String()), client: Nullable(Type.String()), count: Type.Integer() }),
    ),
    recent_uploads: Type.Array(
      Type.Object({
        session_id: Type.String(),
        client_id: Nullable(Type.String({ description: 'The client the session is stored under (null: none)' })),
        client: Nullable(Type.String()),
        target: Nullable(Type.String()),
        risk_score: Nullable(Type.Number()),
        risk_grade: Nullable(Type.String()),
        uploaded_at: IsoDateTime,
      }),
    ),
  }),
  neon_usage: Type.Object({
    tier: Type.String(),
    storage_limit_mb: Nullable(Type.Number()),
    storage_used_mb: Type.Number(),
    storage_mb: Type.Number(),
    storage_pct: Nullable(Type.Number()),
    storage_percent: Nullable(Type.Number()),
    active_connections: Type.Integer(),
    health: Type.String(),
  }),
});
