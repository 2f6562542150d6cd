import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { HeartbeatWriter } from './agents/heartbeat-writer.ts';
import type { ApiKeyVerifier } from './auth/api-keys.ts';
import type { BlobStore } from './blobs/store.ts';
import type { TokenVerifier } from './auth/jwt.ts';
import type { Config } from './config/index.ts';
import type { DatabaseHandle } from './db/pool.ts';
import type { Database } from './db/schema.ts';
import type { InFlightLimit } from './domain/in-flight-limit.ts';
import type { EventBus } from './events/bus.ts';
import type { PortalMetrics } from './metrics/registry.ts';
import type { SigningKey } from './identity/signing-keys.ts';
import type { BenchmarkSnapshots } from './sessions/benchmark-snapshot.ts';
import type { ShareTokenSeal } from './sessions/share-seal.ts';
import type { ServedIndexCache } from './vuln-feeds/serve.ts';
import type { WebhookDispatcher } from './webhooks/dispatcher.ts';
import type { WebhookSecrets } from './webhooks/secrets.ts';
import type { CidrList, Resolver } from './webhooks/url-safety.ts';

/** The one typed context handed to every handler. */
export interface AppContext {
  config: Config;
  logger: Logger;
  db: Kysely<Database>;
  /** The pool under `db`, for the few hot statements run as named prepared statements. */
  pool: pg.Pool;
  /** A second pool that writes the findings index of a large new upload beside its transaction (sessions/index-beside.ts); null: none. */
  indexWriter: DatabaseHandle | null;
  events: EventBus;
  /** Session files. */
  blobs: BlobStore;
  /** Outgoing webhooks, the resolver and allowed ranges their URLs are checked with, their secrets' encryption. */
  webhooks: { dispatcher: WebhookDispatcher; resolver: Resolver; allow: CidrList; secrets: WebhookSecrets };
  /** Seals share tokens under the key-encryption key and opens them to show a link again (sessions/share-seal.ts). */
  shareTokens: ShareTokenSeal;
  keys: ApiKeyVerifier;
  tokens: TokenVerifier;
  /** Present when the portal's own identity provider signs tokens (not in external-provider mode). */
  signingKey: SigningKey | null;
  version: string;
  /** Counters and gauges for GET /metrics; null while metrics are off (docs/metrics.md). */
  metrics: PortalMetrics | null;
  /** The clock; tests substitute a fixed one to check expiry. */
  now: () => Date;
  // What this process keeps for itself, made once in server.ts; each replica has its own
  // (docs/deployment-replicas.md, "What each replica keeps to itself").
  /** Heartbeats written in batches (SVC_HEARTBEAT_BATCH_MAX). */
  heartbeats: HeartbeatWriter;
  /** Password checks in flight and waiting, per e-mail. */
  loginChecks: InFlightLimit;
  /** Uploads in progress, per key (SVC_UPLOADS_PER_KEY). */
  uploads: InFlightLimit;
  /** The benchmark's peer snapshot. */
  benchmarks: BenchmarkSnapshots;
  /** The last vulnerability index read. */
  vulnIndex: ServedIndexCache;
}

export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
