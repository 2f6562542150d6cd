/**
 * What bench/webhooks.ts and its two children (receivers.ts, baseline-sender.ts) say to
 * each other. Configuration goes in as JSON in an environment variable; commands go over a
 * small plain-HTTP control server in each child (127.0.0.1); the receivers announce a
 * completed event on stdout as one line `DONE_PREFIX<event id> <session id>`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export const DONE_PREFIX = '@@done ';

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

export interface ReceiversConfig {
  host: string;
  /** One HTTPS receiver per port; receiver i listens on ports[i]. */
  ports: number[];
  controlPort: number;
  keyPem: string;
  certPem: string;
}

export type BlackHoleMode = 'http' | 'tcp';

export interface PhaseConfig {
  name: string;
  /** Receivers that must have the event before it is announced (all but the black hole). */
  expected: number;
  /** Index of the black-holed receiver, or null. */
  blackHole: number | null;
  /** http: TLS handshake and request accepted, never answered; tcp: TCP accepted, nothing ever sent back. */
  blackHoleMode: BlackHoleMode;
  /** Announce completed events on stdout (the portal's closed loop waits for them). */
  notify: boolean;
}

export interface ReceivedEvent {
  id: string;
  /** Date.parse(envelope.timestamp): the event's creation, ms. */
  ts: number;
  sessionId: string;
  /** Arrival (end of the request body) per receiver index, wall ms; null when it never came. */
  arrivals: (number | null)[];
}

export interface RequestSample {
  receiver: number;
  /** Header names in the order they came, lower case. */
  headerNames: string[];
  /** Bytes of the header block as sent (names, values, ": " and CRLF per line). */
  headerBytes: number;
  bodyBytes: number;
  body: string;
  headers: Record<string, string>;
}

export interface ReceiversResult {
  phase: string;
  events: ReceivedEvent[];
  /** Second arrivals of an (event, receiver) pair: retries after a failure the receiver did not see. */
  duplicates: number;
  /** Bodies that were not a webhook envelope. */
  malformed: number;
  /** Requests the black hole swallowed (http mode) and connections it accepted. */
  blackHoleRequests: number;
  blackHoleConnections: number;
  /** The first request of each receiver in the phase has its two signatures checked. */
  signaturesOk: number;
  signaturesBad: number;
  sample: RequestSample | null;
}

export interface BaselineConfig {
  host: string;
  controlPort: number;
  caPem: string;
  urls: string[];
  secrets: string[];
}

export interface BaselineRunRequest {
  durationMs: number;
  maxEvents: number;
  inFlight: number;
  eventType: string;
  /** The `data` of the envelope, as the portal sent it. */
  data: unknown;
}

export interface BaselineRunResult {
  startedAt: number;
  finishedAt: number;
  events: number;
  deliveries: number;
  failures: number;
  firstError: string | null;
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(body.length) });
  res.end(body);
}
