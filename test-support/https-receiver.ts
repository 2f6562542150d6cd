import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { until } from './wait.ts';

/**
 * A real HTTPS webhook receiver on 127.0.0.1 for tests. Its certificate is issued at test
 * time by a throw-away CA (openssl CLI) for IP 127.0.0.1 and the name `receiver.test`;
 * the portal trusts that CA through SVC_WEBHOOK_CA_FILE (`caFile`). It records every
 * request (method, path, headers, exact body bytes) and every raw TCP connection, and
 * answers as told: a status, hold (answer when released), hang (a black hole), redirect,
 * or close the socket.
 */

const run = promisify(execFile);
const OPENSSL = '/usr/bin/openssl';

export interface TestCa {
  dir: string;
  /** PEM file of the CA certificate: pass as SVC_WEBHOOK_CA_FILE. */
  caFile: string;
  key: string;
  cert: string;
  /** Remove the temporary files. */
  cleanup(): Promise<void>;
}

/** One CA and one server certificate (SAN IP:127.0.0.1, DNS:receiver.test) shared by every receiver of a test file. */
export async function createTestCa(names: string[] = ['receiver.test']): Promise<TestCa> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-test-ca-'));
  const p = (f: string) => path.join(dir, f);
  await run(OPENSSL, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=svc test webhook CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run(OPENSSL, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    p('server.key'),
    '-out',
    p('server.csr'),
    '-subj',
    '/CN=receiver.test',
  ]);
  const san = ['IP:127.0.0.1', ...names.map((n) => `DNS:${n}`)].join(',');
  await fs.writeFile(
    p('ext.cnf'),
    `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`,
  );
  await run(OPENSSL, [
    'x509',
    '-req',
    '-in',
    p('server.csr'),
    '-CA',
    p('ca.pem'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p('server.pem'),
    '-days',
    '2',
    '-extfile',
    p('ext.cnf'),
  ]);
  return {
    dir,
    caFile: p('ca.pem'),
    key: await fs.readFile(p('server.key'), 'utf8'),
    cert: await fs.readFile(p('server.pem'), 'utf8'),
    cleanup: () => fs.rm(dir, { recursive: true, force: true }),
  };
}

export interface ReceivedRequest {
  /** Arrival order across every receiver of the process. */
  seq: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received. */
  raw: Buffer;
  /** raw as UTF-8. */
  body: string;
  /** JSON.parse(body), or undefined when it is not JSON. */
  json: any;
}

export type Behavior =
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** Answer `status` (default 200) after `ms`: a slow but healthy receiver. */
  | { kind: 'delay'; ms: number; status?: number }
  /** Keep the response open until `release()`, then answer `status` (default 200). */
  | { kind: 'hold'; status?: number }
  /** Never answer (a black hole); the socket is destroyed when the receiver closes. */
  | { kind: 'hang' }
  | { kind: 'redirect'; location: string; status?: number; body?: string }
  /** Destroy the socket as soon as the request has arrived, without answering. */
  | { kind: 'close' };

let sequence = 0;

export class HttpsReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** Raw TCP connections accepted (before TLS): proof that nothing connected at all. */
  connections = 0;
  /** Requests that are still unanswered (delay, hold or hang). */
  pending = 0;
  /** The most requests ever unanswered at once (delay, hold or hang). */
  maxPending = 0;
  #server: https.Server;
  #sockets = new Set<Socket>();
  #held: { res: ServerResponse; status: number }[] = [];
  #queue: Behavior[] = [];
  #behavior: Behavior = { kind: 'status', status: 200, body: 'ok' };
  #port = 0;

  private constructor(ca: TestCa) {
    this.#server = https.createServer({ key: ca.key, cert: ca.cert }, (req, res) => this.#onRequest(req, res));
    this.#server.on('connection', (socket: Socket) => {
      this.connections++;
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    // A client that gives up mid-handshake is not an error of the receiver.
    this.#server.on('tlsClientError', () => undefined);
  }

  static async start(ca: TestCa): Promise<HttpsReceiver> {
    const r = new HttpsReceiver(ca);
    await new Promise<void>((resolve, reject) => {
      r.#server.once('error', reject);
      r.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = r.#server.address();
    r.#port = typeof addr === 'object' && addr !== null ? addr.port : 0;
    return r;
  }

  get port(): number {
    return this.#port;
  }

  /** https://127.0.0.1:<port><path> */
  url(p = '/hook'): string {
    return `https://127.0.0.1:${this.#port}${p}`;
  }

  /** The answer for every later request (until changed). */
  respond(behavior: Behavior): this {
    this.#behavior = behavior;
    return this;
  }

  /** Answers for the next requests, in order, before falling back to `respond`'s. */
  queue(...behaviors: Behavior[]): this {
    this.#queue.push(...behaviors);
    return this;
  }

  /** Answer every held request. */
  release(): void {
    for (const { res, status } of this.#held.splice(0)) {
      this.pending--;
      res.writeHead(status, { 'content-type': 'text/plain' }).end('released');
    }
  }

  get held(): number {
    return this.#held.length;
  }

  /** Bounded poll until at least `n` requests arrived (catches hangs; not a timing assertion). */
  async waitFor(n: number, timeoutMs = 20_000): Promise<ReceivedRequest[]> {
    await until(
      () => this.requests.length >= n,
      timeoutMs,
      () => `receiver ${this.url()} got ${this.requests.length} of ${n} requests`,
    );
    return this.requests;
  }

  reset(): void {
    this.requests.length = 0;
    this.connections = 0;
    this.#queue.length = 0;
  }

  async close(): Promise<void> {
    this.release();
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #pend(): void {
    this.pending++;
    this.maxPending = Math.max(this.maxPending, this.pending);
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = raw.toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      this.requests.push({
        seq: ++sequence,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body,
        json,
      });
      const b = this.#queue.shift() ?? this.#behavior;
      switch (b.kind) {
        case 'status':
          res.writeHead(b.status, { 'content-type': 'text/plain', ...b.headers }).end(b.body ?? '');
          break;
        case 'delay': {
          this.#pend();
          const timer = setTimeout(
            () => res.writeHead(b.status ?? 200, { 'content-type': 'text/plain' }).end('slow'),
            b.ms,
          );
          res.on('close', () => {
            clearTimeout(timer);
            this.pending--;
          });
          break;
        }
        case 'hold':
          this.#pend();
          this.#held.push({ res, status: b.status ?? 200 });
          break;
        case 'hang':
          this.#pend();
          res.on('close', () => this.pending--);
          break;
        case 'redirect':
          res.writeHead(b.status ?? 302, { location: b.location, 'content-type': 'text/plain' }).end(b.body ?? 'moved');
          break;
        case 'close':
          req.socket.destroy();
          break;
      }
    });
  }
}
