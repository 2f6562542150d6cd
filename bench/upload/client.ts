/**
 * The upload side of the benchmark: multipart bodies built by hand (so every byte and the
 * exact length are known) and a node:http client that streams them from memory with
 * backpressure, the way a scanner streams its files.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { once } from 'node:events';

/** One multipart body: a small per-upload head, the shared big payload, the shared tail. */
export interface UploadBody {
  sessionId: string;
  /** Boundary, session_json part (header, JSON, CRLF) and the pipeline_log part header. */
  head: Buffer;
  /** The pipeline_log content (shared by every upload: never copied). */
  payload: Buffer;
  /** CRLF after the payload and the closing boundary. */
  tail: Buffer;
  contentType: string;
  length: number;
  /** Bytes of the session JSON in this body (what the portal holds in memory to parse). */
  jsonBytes: number;
}

/** A session id matching ^[a-zA-Z0-9_-]+$, always 34 characters, so every body has the same length. */
export function newSessionId(): string {
  return `bench-upload-${randomBytes(16)
    .toString('base64url')
    .replace(/[^A-Za-z0-9]/g, 'x')
    .slice(0, 21)}`;
}

/** A small but plausible session file (docs/session-file.md): metadata and a few findings. */
export function sessionJson(sessionId: string): Buffer {
  const doc = {
    metadata: {
      session_id: sessionId,
      client_id: 'bench-upload',
      client: 'Benchmark Client',
      target: '192.168.1.0/24',
      tool_version: '4.2.3',
    },
    summary: { risk_score: 42, risk_grade: 'C', total_findings: 3, total_hosts: 2 },
    findings: [
      { title: 'SSH allows password authentication', severity: 'high', host: '192.168.1.10', port: 22 },
      { title: 'Self-signed TLS certificate', severity: 'medium', host: '192.168.1.10', port: 443 },
      { title: 'HTTP server banner', severity: 'info', host: '192.168.1.20', port: 80 },
    ],
  };
  return Buffer.from(JSON.stringify(doc, null, 2), 'utf8');
}

/** `bytes` of plausible pipeline log text (LF line ends, no CR, so no boundary look-alikes). */
export function logPayload(bytes: number): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  const steps = ['discovery', 'port-scan', 'service-detect', 'vuln-check', 'tls-audit', 'report'];
  let off = 0;
  let n = 0;
  let seed = 0x9e3779b9;
  while (off < bytes) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const line = `2025-03-01T14:${String(5 + (n % 50)).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}.${String(n % 1000).padStart(3, '0')}Z INFO [${steps[n % steps.length] ?? 'step'}] host=192.168.1.${seed % 254} port=${seed % 65535} probe=${seed.toString(16)} result=ok elapsed_ms=${seed % 997}\n`;
    off += out.write(line, off, 'latin1');
    n++;
  }
  return out;
}

/**
 * The parts of an upload as the scanner sends them (curl -F name=@file): `session_json`
 * as a file part with Content-Type application/json, then `pipeline_log` as text/plain.
 * The body is `framingBytes(boundary) + payload.length` bytes long (session ids have a
 * fixed length, so every body of a run has the same size).
 */
export function buildBody(sessionId: string, payload: Buffer, boundary: string): UploadBody {
  const json = sessionJson(sessionId);
  const head = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="session_json"; filename="session_results.json"\r\nContent-Type: application/json\r\n\r\n`,
    ),
    json,
    Buffer.from(
      `\r\n--${boundary}\r\nContent-Disposition: form-data; name="pipeline_log"; filename="pipeline.log"\r\nContent-Type: text/plain\r\n\r\n`,
    ),
  ]);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    sessionId,
    head,
    payload,
    tail,
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + payload.length + tail.length,
    jsonBytes: json.length,
  };
}

/** The framing (everything but the payload) of a body, in bytes: to size the payload for a target total. */
export function framingBytes(boundary: string): number {
  const probe = buildBody(newSessionId(), Buffer.alloc(0), boundary);
  return probe.length;
}

export function sha256Of(body: UploadBody): string {
  return createHash('sha256').update(body.head).update(body.payload).update(body.tail).digest('hex');
}

export interface UploadTiming {
  status: number;
  /** The answer's body, as text. */
  answer: string;
  /** ms since the phase started: request started, last body byte handed to the socket, answer complete. */
  startMs: number;
  sentMs: number;
  doneMs: number;
}

export interface UploadTarget {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string>;
  agent: http.Agent;
}

/**
 * POST one body, streamed from memory in `chunkBytes` slices with backpressure. Resolves
 * with the answer (any status); rejects on a connection error with no answer, or when
 * `signal` aborts (the request is destroyed).
 */
export async function upload(
  target: UploadTarget,
  body: UploadBody,
  t0: number,
  signal: AbortSignal,
  chunkBytes = 1 << 20,
): Promise<UploadTiming> {
  signal.throwIfAborted();
  const startMs = performance.now() - t0;
  let sentMs = Number.NaN;
  const req = http.request({
    host: target.host,
    port: target.port,
    path: target.path,
    method: 'POST',
    agent: target.agent,
    signal,
    headers: { ...target.headers, 'content-type': body.contentType, 'content-length': String(body.length) },
  });
  const answered = new Promise<UploadTiming>((resolve, reject) => {
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          answer: Buffer.concat(chunks).toString('utf8'),
          startMs,
          sentMs,
          doneMs: performance.now() - t0,
        }),
      );
      res.once('error', reject);
    });
    req.once('error', reject);
  });
  // A server may answer (and close) before the whole body is sent: the answer is what counts.
  const send = (async () => {
    for (const part of [body.head, body.payload, body.tail]) {
      for (let off = 0; off < part.length; off += chunkBytes) {
        if (req.destroyed) return;
        if (!req.write(part.subarray(off, off + chunkBytes))) await once(req, 'drain', { signal });
      }
    }
    req.end(() => {
      sentMs = performance.now() - t0;
    });
  })();
  send.catch(() => undefined);
  return answered;
}
