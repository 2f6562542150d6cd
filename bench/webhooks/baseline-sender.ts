/**
 * The baseline of bench/webhooks.ts: a bare undici loop in its own process that does what
 * a webhook sender cannot avoid and nothing else. Per event it builds the envelope
 * (api_version, event_type, a fresh evt_<16 hex> id, an ISO timestamp, the portal's very
 * `data`), serialises it once, and posts it to every receiver in parallel, each post with
 * the same headers as the portal's (`X-SVC-Signature-256` and the Standard Webhooks
 * signature computed per delivery with that subscription's secret), over one keep-alive
 * undici Agent set up like the portal's (5 s connect/headers/body timeouts, 64 connections
 * per origin, an AbortSignal timeout per post). No database, no delivery log, no address
 * checks, no retry. `inFlight` events run at once, each as soon as the previous one of its
 * slot had every answer (closed loop).
 *
 * Configuration: BENCH_BASELINE_SENDER_CONFIG (BaselineConfig, JSON). Control (plain HTTP):
 * GET /health, POST /run (BaselineRunRequest → BaselineRunResult).
 */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import { Agent, request } from 'undici';
import { WEBHOOK_API_VERSION, WEBHOOK_USER_AGENT } from '@svc/protocol';
import {
  readBody,
  sendJson,
  wallMs,
  type BaselineConfig,
  type BaselineRunRequest,
  type BaselineRunResult,
} from './shared.ts';

const TIMEOUT_MS = 5_000;

/** The headers the portal sends (packages/portal/src/webhooks/signing.ts), written out independently. */
function signedHeaders(
  secret: string,
  eventType: string,
  eventId: string,
  body: string,
  nowSeconds: number,
): Record<string, string> {
  // The key as a string, like the portal: Node 24 takes ~6x longer to key an HMAC with a Buffer.
  const key = secret;
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'x-svc-event': eventType,
    'x-svc-signature-256': `sha256=${createHmac('sha256', key).update(body, 'utf8').digest('hex')}`,
    'x-svc-delivery': eventId,
    'x-svc-api-version': WEBHOOK_API_VERSION,
    'webhook-id': eventId,
    'webhook-timestamp': String(nowSeconds),
    'webhook-signature': `v1,${createHmac('sha256', key).update(`${eventId}.${nowSeconds}.${body}`, 'utf8').digest('base64')}`,
  };
}

function main(): void {
  const raw = process.env['BENCH_BASELINE_SENDER_CONFIG'];
  if (!raw) {
    console.error('BENCH_BASELINE_SENDER_CONFIG is not set');
    process.exit(2);
  }
  const config = JSON.parse(raw) as BaselineConfig;
  const agent = new Agent({
    connect: { ca: [config.caPem], timeout: TIMEOUT_MS },
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
    connections: 64,
  });
  let running = false;

  const post = async (url: string, headers: Record<string, string>, body: string): Promise<string | null> => {
    try {
      const res = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: agent,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      return res.statusCode >= 200 && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`;
    } catch (err) {
      const e = err as { code?: string; message?: string };
      return `${e.code ?? 'error'}: ${e.message ?? String(err)}`;
    }
  };

  const run = async (r: BaselineRunRequest): Promise<BaselineRunResult> => {
    const startedAt = wallMs();
    const deadline = performance.now() + r.durationMs;
    let issued = 0;
    let deliveries = 0;
    let failures = 0;
    let firstError: string | null = null;
    const slot = async (): Promise<void> => {
      while (issued < r.maxEvents && performance.now() < deadline) {
        issued++;
        const eventId = `evt_${randomBytes(8).toString('hex')}`;
        const body = JSON.stringify({
          api_version: WEBHOOK_API_VERSION,
          event_type: r.eventType,
          event_id: eventId,
          timestamp: new Date().toISOString(),
          data: r.data,
        });
        const outcomes = await Promise.all(
          config.urls.map((url, i) =>
            post(
              url,
              signedHeaders(config.secrets[i] as string, r.eventType, eventId, body, Math.floor(Date.now() / 1000)),
              body,
            ),
          ),
        );
        for (const o of outcomes) {
          deliveries++;
          if (o !== null) {
            failures++;
            firstError ??= o;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: r.inFlight }, () => slot()));
    return { startedAt, finishedAt: wallMs(), events: issued, deliveries, failures, firstError };
  };

  const control = http.createServer((req, res) => {
    void (async () => {
      try {
        if (req.method === 'GET' && req.url === '/health') return sendJson(res, 200, { ok: true });
        if (req.method === 'POST' && req.url === '/run') {
          if (running) return sendJson(res, 409, { error: 'a run is in progress' });
          running = true;
          try {
            return sendJson(res, 200, await run(JSON.parse(await readBody(req)) as BaselineRunRequest));
          } finally {
            running = false;
          }
        }
        sendJson(res, 404, { error: 'not found' });
      } catch (err) {
        sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
      }
    })();
  });
  // A run lasts longer than Node's default request timeout would allow for a slow phase.
  control.requestTimeout = 0;
  control.listen(config.controlPort, config.host);

  const shutdown = (): void => {
    control.close();
    control.closeAllConnections();
    void agent.destroy().catch(() => undefined);
    setTimeout(() => process.exit(0), 500).unref();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main();
