/**
 * The webhook receivers of bench/webhooks.ts, all in this one child process: one node
 * HTTPS server per port (certificate from the benchmark's throw-away CA), each answering
 * 200 "ok" as soon as the request body has arrived, and recording that arrival time per
 * event id. Both the portal and the baseline sender deliver to these same servers.
 *
 * One receiver can be made a black hole for a phase: `http` accepts the connection, does
 * the TLS handshake, reads the request and never answers; `tcp` accepts the TCP
 * connection and never sends a byte (no TLS handshake).
 *
 * Configuration: BENCH_RECEIVERS_CONFIG (ReceiversConfig, JSON). Control (plain HTTP on
 * 127.0.0.1:controlPort): GET /health, POST /secrets, POST /phase, GET /result.
 * A completed event (every receiver but the black hole has it) is announced on stdout.
 */
import { createHmac } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import {
  DONE_PREFIX,
  readBody,
  sendJson,
  wallMs,
  type PhaseConfig,
  type ReceivedEvent,
  type ReceiversConfig,
  type ReceiversResult,
  type RequestSample,
} from './shared.ts';

interface EventRecord {
  id: string;
  ts: number;
  sessionId: string;
  arrivals: Float64Array;
  count: number;
}

function main(): void {
  const raw = process.env['BENCH_RECEIVERS_CONFIG'];
  if (!raw) {
    console.error('BENCH_RECEIVERS_CONFIG is not set');
    process.exit(2);
  }
  const config = JSON.parse(raw) as ReceiversConfig;
  const n = config.ports.length;

  let phase: PhaseConfig = { name: 'idle', expected: n, blackHole: null, blackHoleMode: 'http', notify: false };
  let secrets: string[] = [];
  let events = new Map<string, EventRecord>();
  let duplicates = 0;
  let malformed = 0;
  let blackHoleRequests = 0;
  let blackHoleConnections = 0;
  let signaturesOk = 0;
  let signaturesBad = 0;
  let checked = new Set<number>();
  let sample: RequestSample | null = null;

  /** Live TLS-bound sockets per receiver; sockets the tcp black hole holds; requests the http black hole holds. */
  const live: Set<net.Socket>[] = Array.from({ length: n }, () => new Set<net.Socket>());
  const held = new Set<net.Socket>();
  const hung = new Set<ServerResponse>();

  const verify = (i: number, req: IncomingMessage, body: Buffer): void => {
    const secret = secrets[i];
    if (secret === undefined) return;
    const key = Buffer.from(secret, 'utf8');
    const gh = `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
    const id = String(req.headers['webhook-id'] ?? '');
    const ts = String(req.headers['webhook-timestamp'] ?? '');
    const std = `v1,${createHmac('sha256', key).update(`${id}.${ts}.`).update(body).digest('base64')}`;
    if (req.headers['x-svc-signature-256'] === gh && req.headers['webhook-signature'] === std) signaturesOk++;
    else signaturesBad++;
  };

  const record = (i: number, t: number, req: IncomingMessage, body: Buffer): void => {
    let envelope: { event_id?: unknown; timestamp?: unknown; data?: { session_id?: unknown } };
    try {
      envelope = JSON.parse(body.toString('utf8')) as typeof envelope;
    } catch {
      malformed++;
      return;
    }
    if (typeof envelope.event_id !== 'string' || typeof envelope.timestamp !== 'string') {
      malformed++;
      return;
    }
    const id = envelope.event_id;
    let e = events.get(id);
    if (!e) {
      const sessionId = typeof envelope.data?.session_id === 'string' ? envelope.data.session_id : '';
      e = {
        id,
        ts: Date.parse(envelope.timestamp),
        sessionId,
        arrivals: new Float64Array(n).fill(Number.NaN),
        count: 0,
      };
      events.set(id, e);
    }
    if (!Number.isNaN(e.arrivals[i] as number)) {
      duplicates++;
      return;
    }
    e.arrivals[i] = t;
    if (i !== phase.blackHole) e.count++;
    if (!checked.has(i)) {
      checked.add(i);
      verify(i, req, body);
      if (sample === null) {
        let headerBytes = 0;
        for (let k = 0; k + 1 < req.rawHeaders.length; k += 2)
          headerBytes += (req.rawHeaders[k] as string).length + 2 + (req.rawHeaders[k + 1] as string).length + 2;
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
        sample = {
          receiver: i,
          headerNames: req.rawHeaders.filter((_, k) => k % 2 === 0).map((h) => h.toLowerCase()),
          headerBytes,
          bodyBytes: body.length,
          body: body.toString('utf8'),
          headers,
        };
      }
    }
    if (phase.notify && e.count === phase.expected) process.stdout.write(`${DONE_PREFIX}${id} ${e.sessionId}\n`);
  };

  const ok = Buffer.from('ok');
  const onRequest = (i: number, req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const t = wallMs();
      if (phase.blackHole === i && phase.blackHoleMode === 'http') {
        blackHoleRequests++;
        hung.add(res);
        res.on('close', () => hung.delete(res));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end(ok);
      record(i, t, req, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
    });
  };

  const servers: net.Server[] = [];
  config.ports.forEach((port, i) => {
    const tlsServer = https.createServer({ key: config.keyPem, cert: config.certPem }, (req, res) =>
      onRequest(i, req, res),
    );
    // A sender that gives up mid-handshake (the black hole's peers, shutdown) is not our error.
    tlsServer.on('tlsClientError', () => undefined);
    tlsServer.on('clientError', (_err, socket) => socket.destroy());
    // The TCP front decides per connection whether TLS/HTTP ever sees it.
    const front = net.createServer({ noDelay: true }, (socket) => {
      socket.on('error', () => undefined);
      if (phase.blackHole === i) blackHoleConnections++;
      if (phase.blackHole === i && phase.blackHoleMode === 'tcp') {
        held.add(socket);
        socket.on('close', () => held.delete(socket));
        return;
      }
      const set = live[i] as Set<net.Socket>;
      set.add(socket);
      socket.on('close', () => set.delete(socket));
      tlsServer.emit('connection', socket);
    });
    front.listen(port, config.host);
    servers.push(front);
  });

  const setPhase = (next: PhaseConfig): void => {
    // When the black hole changes, whatever the previous one holds is dropped and the new one
    // loses its open keep-alive connections, so every later delivery to it meets the black
    // hole. The same black hole in the next phase keeps what it holds.
    if (next.blackHole !== phase.blackHole || next.blackHoleMode !== phase.blackHoleMode) {
      for (const s of held) s.destroy();
      for (const r of hung) r.socket?.destroy();
      if (next.blackHole !== null) for (const s of live[next.blackHole] ?? []) s.destroy();
    }
    phase = next;
    events = new Map();
    duplicates = 0;
    malformed = 0;
    blackHoleRequests = 0;
    blackHoleConnections = 0;
    signaturesOk = 0;
    signaturesBad = 0;
    checked = new Set();
    sample = null;
  };

  const result = (): ReceiversResult => {
    const list: ReceivedEvent[] = [];
    for (const e of events.values())
      list.push({
        id: e.id,
        ts: e.ts,
        sessionId: e.sessionId,
        arrivals: Array.from(e.arrivals, (v) => (Number.isNaN(v) ? null : v)),
      });
    return {
      phase: phase.name,
      events: list,
      duplicates,
      malformed,
      blackHoleRequests,
      blackHoleConnections,
      signaturesOk,
      signaturesBad,
      sample,
    };
  };

  const control = http.createServer((req, res) => {
    void (async () => {
      try {
        if (req.method === 'GET' && req.url === '/health') return sendJson(res, 200, { ok: true, receivers: n });
        if (req.method === 'POST' && req.url === '/secrets') {
          secrets = (JSON.parse(await readBody(req)) as { secrets: string[] }).secrets;
          return sendJson(res, 200, { ok: true });
        }
        if (req.method === 'POST' && req.url === '/phase') {
          setPhase(JSON.parse(await readBody(req)) as PhaseConfig);
          return sendJson(res, 200, { ok: true });
        }
        if (req.method === 'GET' && req.url === '/result') return sendJson(res, 200, result());
        sendJson(res, 404, { error: 'not found' });
      } catch (err) {
        sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
      }
    })();
  });
  control.listen(config.controlPort, config.host);

  const shutdown = (): void => {
    for (const s of held) s.destroy();
    for (const set of live) for (const s of set) s.destroy();
    for (const s of servers) s.close();
    control.close();
    control.closeAllConnections();
    setTimeout(() => process.exit(0), 500).unref();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main();
