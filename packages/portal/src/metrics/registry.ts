import { COMMAND_STATUSES } from '@svc/protocol';
import type pg from 'pg';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { type OperationSources, operationGauges } from './operation-gauges.ts';

/**
 * What a webhook delivery came to: answered 2xx, failed (after its retry), not sent (the
 * receiver's bulkhead), or abandoned (no run recorded an outcome: webhooks/leases.ts).
 */
export type DeliveryOutcome = 'delivered' | 'failed' | 'shed' | 'abandoned';

/** The blob store calls whose failures are counted (blobs/counted.ts). */
export const BLOB_OPERATIONS = ['put', 'get', 'delete'] as const;
export type BlobOperation = (typeof BLOB_OPERATIONS)[number];

/** Why an upload was refused for room (sessions/storage-quota.ts): the disk's floor, the portal's or the client's limit. */
export const STORAGE_REFUSALS = ['disk', 'portal_limit', 'client_limit'] as const;
export type StorageRefusal = (typeof STORAGE_REFUSALS)[number];

/**
 * Where the findings index of a large new session was written (sessions/index-beside.ts): beside
 * the upload on the writer's connection, or in the upload's transaction because every writer
 * connection was busy or the writer's connection failed.
 */
export const INDEX_WRITES = ['beside', 'busy', 'failed'] as const;
export type IndexWrite = (typeof INDEX_WRITES)[number];

/** What the gauges read at scrape time; attached once the pool and the webhook client exist. */
export interface MetricSources extends OperationSources {
  pool: pg.Pool;
  poolMax: number;
  /** Webhook attempts waiting for a slot, and in flight, summed over receivers. */
  webhookQueue: () => { waiting: number; inFlight: number };
  /** Agent commands per status, from the database. */
  commandsByStatus: () => Promise<Record<string, number>>;
}

/** The heartbeat route: its answers are also counted as heartbeats, by outcome. */
const HEARTBEAT_ROUTE = '/api/health';
/** Requests that matched no route share one label: the raw URL would make the label set unbounded. */
const UNMATCHED_ROUTE = 'unmatched';
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface RequestSeries {
  count: { inc(): void };
  duration: { observe(value: number): void };
}

/**
 * The portal's metrics (docs/metrics.md), in a registry of its own: tests start many
 * portals in one process, and prom-client's global registry would mix them. Counters are
 * bumped on the paths they count (no database work); gauges are read when scraped.
 */
export class PortalMetrics {
  readonly registry = new Registry();
  readonly #logger: Logger;
  #sources: MetricSources | null = null;
  /** Label children per route, method and status: the request hook skips prom-client's label hashing. */
  readonly #series = new Map<string, RequestSeries>();

  readonly #requests: Counter<'route' | 'method' | 'status_code'>;
  readonly #latency: Histogram<'route' | 'method' | 'status_code'>;
  readonly #heartbeats: Counter<'outcome'>;
  readonly #deliveries: Counter<'outcome'>;
  readonly #uploadBytes: Counter<'outcome'>;
  readonly #poolAcquire: Histogram;
  readonly #embeddedRestarts: Counter;
  readonly #heartbeatBatches: Histogram;
  readonly #blobFailures: Counter<'operation'>;
  readonly #uploadsRefused: Counter<'reason'>;
  readonly #indexWrites: Counter<'outcome'>;

  constructor(opts: { logger: Logger; version: string; watchBackups?: boolean }) {
    this.#logger = opts.logger;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
    new Gauge({
      name: 'svc_build_info',
      help: 'The running portal version (always 1)',
      labelNames: ['version'],
      registers,
    }).set({ version: opts.version }, 1);
    this.#requests = new Counter({
      name: 'svc_http_requests_total',
      help: 'HTTP requests answered, by route pattern (unmatched: no route), method and status code',
      labelNames: ['route', 'method', 'status_code'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'Time from a request to its answer, by route pattern, method and status code',
      labelNames: ['route', 'method', 'status_code'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.#heartbeats = new Counter({
      name: 'svc_heartbeats_total',
      help: 'Agent heartbeats (POST /api/health) by outcome: accepted (2xx), refused (4xx), failed (5xx)',
      labelNames: ['outcome'],
      registers,
    });
    this.#deliveries = new Counter({
      name: 'svc_webhook_deliveries_total',
      help: 'Webhook deliveries by outcome: delivered, failed (after its retry), shed (not sent: the receiver queue was full or its turn did not come), abandoned (taken over after its lease expired too often, or its subscription was disabled or moved)',
      labelNames: ['outcome'],
      registers,
    });
    this.#uploadBytes = new Counter({
      name: 'svc_upload_bytes_total',
      help: 'Request body bytes received by POST /api/upload, by outcome: stored (the session was committed) or refused',
      labelNames: ['outcome'],
      registers,
    });
    this.#poolAcquire = new Histogram({
      name: 'svc_db_pool_acquire_seconds',
      help: 'Time to get a database connection from the pool (waiting for a free one, or opening one)',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2],
      registers,
    });
    this.#embeddedRestarts = new Counter({
      name: 'svc_embedded_db_restarts_total',
      help: 'Times the embedded PostgreSQL exited unexpectedly and was started again',
      registers,
    });
    this.#heartbeatBatches = new Histogram({
      name: 'svc_heartbeat_batch_size',
      help: 'Heartbeats written together by one batch statement (a heartbeat written alone is not counted)',
      buckets: [2, 5, 10, 20, 50, 100, 200, 500],
      registers,
    });
    this.#blobFailures = new Counter({
      name: 'svc_blob_store_failures_total',
      help: 'Blob store calls that failed (the store unreachable, timing out, or erring; a missing object is not a failure), by operation: put, get, delete',
      labelNames: ['operation'],
      registers,
    });
    this.#uploadsRefused = new Counter({
      name: 'svc_uploads_refused_total',
      help: 'Uploads refused for room, by reason: disk (SVC_MIN_FREE_DISK_MB), portal_limit (SVC_STORAGE_LIMIT_MB), client_limit (SVC_CLIENT_STORAGE_LIMIT_MB)',
      labelNames: ['reason'],
      registers,
    });
    this.#indexWrites = new Counter({
      name: 'svc_findings_index_writes_total',
      help: 'Findings indexes of large new sessions by where they were written: beside (on the index writer connection), busy or failed (in the upload transaction: every writer connection was in use, or the writer connection failed)',
      labelNames: ['outcome'],
      registers,
    });
    for (const operation of BLOB_OPERATIONS) this.#blobFailures.inc({ operation }, 0);
    for (const reason of STORAGE_REFUSALS) this.#uploadsRefused.inc({ reason }, 0);
    for (const outcome of INDEX_WRITES) this.#indexWrites.inc({ outcome }, 0);
    // Initialised so that every outcome is a series from the start (rate() and alerts see a 0, not nothing).
    for (const outcome of ['accepted', 'refused', 'failed']) this.#heartbeats.inc({ outcome }, 0);
    for (const outcome of ['delivered', 'failed', 'shed']) this.#deliveries.inc({ outcome }, 0);
    for (const outcome of ['stored', 'refused']) this.#uploadBytes.inc({ outcome }, 0);
    this.#scrapeTimeGauges(registers);
    operationGauges(registers, () => this.#sources, this.#logger, opts.watchBackups === true);
  }

  /** The gauges are read from these from now on; until then they have no value. */
  attach(sources: MetricSources): void {
    this.#sources = sources;
  }

  /** One answered request (the app's onResponse hook). */
  observeRequest(route: string | undefined, method: string, statusCode: number, seconds: number): void {
    const r = route ?? UNMATCHED_ROUTE;
    const m = METHODS.has(method) ? method : 'OTHER';
    const key = `${m} ${statusCode} ${r}`;
    let series = this.#series.get(key);
    if (series === undefined) {
      const labels = { route: r, method: m, status_code: String(statusCode) };
      series = { count: this.#requests.labels(labels), duration: this.#latency.labels(labels) };
      this.#series.set(key, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
    if (r === HEARTBEAT_ROUTE && m === 'POST')
      this.#heartbeats.inc({ outcome: statusCode < 400 ? 'accepted' : statusCode < 500 ? 'refused' : 'failed' });
  }

  delivery(outcome: DeliveryOutcome): void {
    this.#deliveries.inc({ outcome });
  }

  uploadBytes(bytes: number, stored: boolean): void {
    if (bytes > 0) this.#uploadBytes.inc({ outcome: stored ? 'stored' : 'refused' }, bytes);
  }

  poolAcquired(seconds: number): void {
    this.#poolAcquire.observe(seconds);
  }

  heartbeatBatch(size: number): void {
    this.#heartbeatBatches.observe(size);
  }

  embeddedRestarted(): void {
    this.#embeddedRestarts.inc();
  }

  blobStoreFailed(operation: BlobOperation): void {
    this.#blobFailures.inc({ operation });
  }

  uploadRefused(reason: StorageRefusal): void {
    this.#uploadsRefused.inc({ reason });
  }

  indexWritten(outcome: IndexWrite): void {
    this.#indexWrites.inc({ outcome });
  }

  #scrapeTimeGauges(registers: Registry[]): void {
    const sources = () => this.#sources;
    new Gauge({
      name: 'svc_db_pool_connections',
      help: 'Database connections of this process by state: in_use (checked out) or idle',
      labelNames: ['state'],
      registers,
      collect() {
        const s = sources();
        if (s === null) return;
        this.set({ state: 'in_use' }, s.pool.totalCount - s.pool.idleCount);
        this.set({ state: 'idle' }, s.pool.idleCount);
      },
    });
    new Gauge({
      name: 'svc_db_pool_waiting_clients',
      help: 'Queries waiting for a database connection (the pool is at its maximum)',
      registers,
      collect() {
        const s = sources();
        if (s !== null) this.set(s.pool.waitingCount);
      },
    });
    new Gauge({
      name: 'svc_db_pool_max_connections',
      help: 'The pool maximum (SVC_DB_POOL_MAX)',
      registers,
      collect() {
        const s = sources();
        if (s !== null) this.set(s.poolMax);
      },
    });
    new Gauge({
      name: 'svc_webhook_queue_depth',
      help: 'Webhook attempts waiting for a slot at their receiver (all receivers)',
      registers,
      collect() {
        const s = sources();
        if (s !== null) this.set(s.webhookQueue().waiting);
      },
    });
    new Gauge({
      name: 'svc_webhook_in_flight',
      help: 'Webhook attempts being sent now (all receivers)',
      registers,
      collect() {
        const s = sources();
        if (s !== null) this.set(s.webhookQueue().inFlight);
      },
    });
    const logger = this.#logger;
    new Gauge({
      name: 'svc_agent_commands',
      help: 'Agent commands by status, counted in the database when scraped (the same on every replica)',
      labelNames: ['status'],
      registers,
      async collect() {
        const s = sources();
        if (s === null) return;
        try {
          const counts = await s.commandsByStatus();
          for (const status of COMMAND_STATUSES) this.set({ status }, counts[status] ?? 0);
        } catch (err) {
          // No stale numbers while the database cannot answer; the rest of the scrape still goes out.
          this.reset();
          logger.warn({ err: { message: (err as Error).message } }, 'metrics: agent command counts unavailable');
        }
      },
    });
  }
}
