import fs from 'node:fs';
import type { LookupFunction } from 'node:net';
import tls from 'node:tls';
import { Agent, request } from 'undici';
import ipaddr from 'ipaddr.js';
import { OriginLimits, type Shed } from './origin-limits.ts';
import { checkedAddresses, parseWebhookUrl, UnsafeUrlError, type CidrList, type Resolver } from './url-safety.ts';

export const DELIVERY_TIMEOUT_MS = 5_000;
/** Deliveries in flight to one origin at most by default (SVC_WEBHOOK_MAX_IN_FLIGHT); less while it times out (OriginLimits). */
export const MAX_IN_FLIGHT_PER_ORIGIN = 64;
const TIMEOUT_ERROR = 'timeout after 5 s';

export interface PostResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /**
   * Turned away by the receiver's bulkhead (queue full, or its turn did not come in time)
   * without being sent: says nothing about the receiver, so it is no failure of it.
   */
  shed: boolean;
}

export interface WebhookHttpClientOptions {
  resolver: Resolver;
  allow: CidrList;
  caFile: string | null;
  /** Bulkhead per receiver origin (OriginLimits); defaults: 64 in flight, 1000 waiting, 20 s wait. */
  maxInFlight?: number;
  queueMax?: number;
  queueWaitMs?: number;
}

/**
 * The only HTTP client that talks to subscribers. Its connect-time lookup resolves the
 * host through the resolver, refuses the connection unless every address is public (or
 * allowed), and connects to an address it just checked: there is no second lookup for a
 * rebinding DNS server to answer differently. Redirects are never followed and the
 * subscriber's response body is discarded unread.
 */
export class WebhookHttpClient {
  readonly #agent: Agent;
  readonly #resolver: Resolver;
  readonly #allow: CidrList;
  readonly #limits: OriginLimits;

  constructor(opts: WebhookHttpClientOptions) {
    this.#resolver = opts.resolver;
    this.#allow = opts.allow;
    const maxInFlight = opts.maxInFlight ?? MAX_IN_FLIGHT_PER_ORIGIN;
    this.#limits = new OriginLimits({
      max: maxInFlight,
      queueMax: opts.queueMax ?? 1000,
      waitMs: opts.queueWaitMs ?? 20_000,
    });
    const lookup: LookupFunction = (hostname, options, callback) => {
      checkedAddresses(
        new URL(`https://${hostname.includes(':') ? `[${hostname}]` : hostname}/`),
        opts.resolver,
        opts.allow,
      ).then(
        (addresses) => {
          const family = (a: string) => (a.includes(':') ? 6 : 4);
          if (options.all)
            callback(
              null,
              addresses.map((address) => ({ address, family: family(address) })),
            );
          else callback(null, addresses[0] as string, family(addresses[0] as string));
        },
        (err: Error) => callback(Object.assign(err, { code: 'EUNSAFE' }) as NodeJS.ErrnoException, '', 0),
      );
    };
    const ca =
      opts.caFile === null
        ? undefined
        : [
            ...(fs
              .readFileSync(opts.caFile, 'utf8')
              .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []),
          ];
    // Built once: a TLS context from ~120 root certificates costs ~7 ms of blocking CPU, far
    // too much to pay on every new connection. The public roots stay when a CA is added.
    const secureContext = ca ? tls.createSecureContext({ ca: [...tls.rootCertificates, ...ca] }) : undefined;
    this.#agent = new Agent({
      connect: { lookup, timeout: DELIVERY_TIMEOUT_MS, ...(secureContext ? { secureContext } : {}) },
      // HTTP/1.1 only: undici's HTTP/2 probe holds every other request to an origin until the
      // first connection's handshake ends, and the per-request timeout does not run while a
      // request is queued, so a receiver that accepts TCP and never answers would pile up
      // deliveries without bound.
      allowH2: false,
      headersTimeout: DELIVERY_TIMEOUT_MS,
      bodyTimeout: DELIVERY_TIMEOUT_MS,
      connections: maxInFlight,
    });
  }

  /**
   * `headers` may be a function, called once the attempt has its slot: a signature's timestamp
   * is then the time of sending, not of queueing (Standard Webhooks receivers refuse stale ones).
   */
  async post(
    url: string,
    headers: Record<string, string> | (() => Record<string, string>),
    body: string,
  ): Promise<PostResult> {
    let started = performance.now();
    const done = (statusCode: number | null, error: string | null, shed = false): PostResult => ({
      statusCode,
      durationMs: Math.round(performance.now() - started),
      error,
      shed,
    });
    let origin: string;
    try {
      // The stored URL is judged by today's rules. A host name is resolved and checked by the
      // connect-time lookup above; an IP literal never reaches a lookup (net.connect skips
      // it), so it is checked here, also when it was allowed at creation under another
      // SVC_WEBHOOK_ALLOW_CIDRS.
      const parsed = parseWebhookUrl(url);
      const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
      if (ipaddr.isValid(host)) await checkedAddresses(parsed, this.#resolver, this.#allow);
      origin = parsed.origin;
    } catch (err) {
      if (err instanceof UnsafeUrlError) return done(null, err.message);
      throw err;
    }
    // A bulkhead (OriginLimits): a receiver that accepts connections and never answers holds
    // each attempt for the whole timeout. Without a bound its attempts would queue behind the
    // origin's connections and each take a fresh TLS connection a moment before its own
    // timeout, costing the portal a handshake per attempt for nothing. Past the bound an
    // attempt waits its turn (bounded queue, deadline); a shed one is not sent.
    const slot = await this.#limits.acquire(origin);
    if (!slot.ok) return done(null, shedMessage(slot), true);
    // A sent attempt's duration is the receiver's time, not its wait in the queue.
    started = performance.now();
    let outcome: 'answered' | 'timed-out' | 'other' = 'other';
    try {
      const res = await request(url, {
        method: 'POST',
        headers: typeof headers === 'function' ? headers() : headers,
        body,
        dispatcher: this.#agent,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      outcome = 'answered';
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return done(res.statusCode, ok ? null : `HTTP ${res.statusCode}`);
    } catch (err) {
      const error = describe(err);
      if (error === TIMEOUT_ERROR) outcome = 'timed-out';
      return done(null, error);
    } finally {
      this.#limits.release(origin, outcome);
    }
  }

  /** Shutdown, before deliveries are drained: queued attempts are not sent (OriginLimits.shedWaiting). */
  shedWaiting(): void {
    this.#limits.shedWaiting();
  }

  /** Attempts waiting for a slot and in flight, over every receiver. */
  load(): { waiting: number; inFlight: number } {
    return this.#limits.totals();
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

function shedMessage(s: Shed): string {
  const inFlight =
    s.inFlight === 1 ? '1 delivery to this receiver is' : `${s.inFlight} deliveries to this receiver are`;
  if (s.reason === 'shutdown') return 'not sent: the portal is shutting down';
  return s.reason === 'queue-full'
    ? `not sent: ${inFlight} in flight and its queue is full`
    : `not sent: ${inFlight} in flight; waited ${(s.waitedMs / 1000).toFixed(1)} s for a turn`;
}

/**
 * A short, safe description of a failure: never the subscriber's body. Messages can carry
 * text the subscriber chose (a certificate's names in a TLS error), so control characters
 * are replaced: a NUL would make the whole log entry unstorable (PostgreSQL text and jsonb
 * refuse it), and line breaks would forge log lines.
 */
export function describe(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT'
  )
    return TIMEOUT_ERROR;
  const code = e.cause?.code ?? e.code;
  const message = (e.cause?.message ?? e.message ?? '').slice(0, 200);
  const clean = (text: string) => text.replace(/[\u0000-\u001f\u007f]/g, ' ');
  if (code === 'EUNSAFE') return clean(message || 'address refused');
  return clean(`${code ?? e.name ?? 'error'}: ${message}`);
}
