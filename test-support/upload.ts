import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';

/**
 * Upload helpers for tests: multipart bodies built by hand (so a test knows every byte
 * and can make the whole body exactly N bytes long), a raw HTTP client that copes with a
 * server answering before the body is sent, and views of the blob store on disk.
 */

export type Doc = Record<string, any>;

export function loadFixture(name: 'session-minimal.json' | 'session-complete.json'): Doc {
  return JSON.parse(readFileSync(new URL(`../packages/portal/tests/fixtures/${name}`, import.meta.url), 'utf8')) as Doc;
}

/**
 * A scan of `target` holding `findings`, each in its remediation as `new`, finished at noon UTC
 * of the session id's day. With `coverage` (over a full-range quick scan of the findings' hosts)
 * the scan says what it looked at, so findings it did not see are resolved, not "not checked".
 */
export function scanDocument(sessionId: string, target: string, findings: Doc[], coverage?: Doc): Doc {
  const day = `${sessionId.slice(0, 4)}-${sessionId.slice(4, 6)}-${sessionId.slice(6, 8)}`;
  return {
    metadata: { session_id: sessionId, target, finished_at: `${day}T12:00:00Z` },
    findings,
    remediation: findings.map((f) => ({
      title: f['title'],
      severity: f['severity'],
      host: f['host'],
      finding_id: f['id'],
      status: 'new',
    })),
    ...(coverage === undefined
      ? {}
      : {
          coverage: {
            hosts: findings.map((f) => f['host']),
            ports: { tcp: '1-65535' },
            profile: 'quick_recon',
            tools: ['nmap'],
            ...coverage,
          },
        }),
  };
}

/** A fresh, valid session id (scanner style plus a random suffix). */
export function newSessionId(): string {
  return `20250301_140512_${randomBytes(5).toString('hex')}`;
}

/** A fixture with its session id replaced. */
export function sessionDoc(name: 'session-minimal.json' | 'session-complete.json', sessionId = newSessionId()): Doc {
  const doc = loadFixture(name);
  doc['metadata']['session_id'] = sessionId;
  return doc;
}

export interface Part {
  name: string;
  /** Present: a file part (what curl -F name=@file sends); absent: a plain field. */
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

export interface Multipart {
  body: Buffer;
  contentType: string;
  boundary: string;
}

export function partHeader(boundary: string, p: Omit<Part, 'data'>): string {
  let h = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
  if (p.filename !== undefined) h += `; filename="${p.filename}"`;
  h += '\r\n';
  if (p.contentType !== undefined) h += `Content-Type: ${p.contentType}\r\n`;
  return `${h}\r\n`;
}

export const closing = (boundary: string) => `--${boundary}--\r\n`;

export function newBoundary(): string {
  return `----svc-test-${randomBytes(12).toString('hex')}`;
}

/** A multipart/form-data body, byte for byte. */
export function multipart(parts: Part[], boundary = newBoundary()): Multipart {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(
      Buffer.from(partHeader(boundary, p)),
      Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(closing(boundary)));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}`, boundary };
}

export interface SessionFiles {
  log?: string | Buffer | undefined;
  report?: string | Buffer | undefined;
  exec?: string | Buffer | undefined;
}

/** The parts of an upload as the scanner sends them: session_json plus optional files. */
export function sessionParts(doc: Doc | string | Buffer, files: SessionFiles = {}): Part[] {
  const json = typeof doc === 'string' || Buffer.isBuffer(doc) ? doc : JSON.stringify(doc, null, 2);
  const parts: Part[] = [
    { name: 'session_json', filename: 'session_results.json', contentType: 'application/json', data: json },
  ];
  if (files.log !== undefined)
    parts.push({ name: 'pipeline_log', filename: 'pipeline.log', contentType: 'text/plain', data: files.log });
  if (files.report !== undefined)
    parts.push({ name: 'report_html', filename: 'report_x.html', contentType: 'text/html', data: files.report });
  if (files.exec !== undefined)
    parts.push({
      name: 'exec_summary_html',
      filename: 'exec_summary_x.html',
      contentType: 'text/html',
      data: files.exec,
    });
  return parts;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

export interface RawRequestOptions {
  method?: string;
  headers?: Record<string, string | number>;
  /** Sent with a Content-Length (unless headers say otherwise). */
  body?: Buffer | undefined;
  /** Sent chunk by chunk with Transfer-Encoding: chunked (no Content-Length). */
  chunks?: Iterable<Buffer> | AsyncIterable<Buffer>;
  /** Bound on the whole exchange, to catch hangs only. */
  timeoutMs?: number;
}

/**
 * One HTTP request over node:http. The body is written with back-pressure; a server that
 * answers early (a 413 before the body is read) and closes the connection is fine: the
 * answer is what counts, write errors after it are ignored.
 */
export function rawRequest(url: string, opts: RawRequestOptions = {}): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    const headers: Record<string, string | number> = { ...opts.headers };
    if (opts.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length'))
      headers['content-length'] = opts.body.length;
    const req = http.request(url, { method: opts.method ?? 'POST', headers, agent: false });
    let settled = false;
    let answered = false;
    const timer = setTimeout(
      () => fail(new Error(`rawRequest: no answer within ${opts.timeoutMs ?? 120_000} ms`)),
      opts.timeoutMs ?? 120_000,
    );
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(err);
    };
    req.on('error', (err) => {
      if (!answered) fail(err);
    });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => fail(err));
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        if (String(res.headers['content-type'] ?? '').includes('json') && text !== '') body = JSON.parse(text);
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
    });
    // After every write the event loop polls the socket (setImmediate runs after the poll
    // phase), so an early answer is read before the next write can fail on the closed
    // connection (EPIPE would otherwise destroy the socket with the answer unread).
    const pollThenWrite = async (chunk: Buffer): Promise<boolean> => {
      await new Promise<void>((r) => setImmediate(r));
      if (answered || req.destroyed) return false;
      if (!req.write(chunk)) {
        await new Promise<void>((r) => {
          const done = () => {
            req.off('drain', done);
            req.off('close', done);
            r();
          };
          req.on('drain', done);
          req.on('close', done);
        });
      }
      return true;
    };
    void (async () => {
      try {
        if (opts.chunks !== undefined) {
          for await (const chunk of opts.chunks) if (!(await pollThenWrite(chunk))) return;
        } else if (opts.body !== undefined) {
          // In slices, so an early answer stops the sending.
          const slice = 64 * 1024;
          for (let i = 0; i < opts.body.length; i += slice)
            if (!(await pollThenWrite(opts.body.subarray(i, i + slice)))) return;
        }
        await new Promise<void>((r) => setImmediate(r));
        if (!answered && !req.destroyed) req.end();
      } catch (err) {
        if (!answered) fail(err as Error);
      }
    })();
  });
}

/** POST /api/upload with a hand-built multipart body. */
export function postUpload(
  baseUrl: string,
  key: string | null,
  parts: Part[] | Multipart,
  extraHeaders: Record<string, string> = {},
): Promise<RawResponse> {
  const mp = Array.isArray(parts) ? multipart(parts) : parts;
  const headers: Record<string, string> = { 'content-type': mp.contentType, ...extraHeaders };
  if (key !== null) headers['x-api-key'] = key;
  return rawRequest(`${baseUrl}/api/upload`, { headers, body: mp.body });
}

export const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** Every regular file under `dir`, as paths relative to it ('/'-separated); [] when it does not exist. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await fs
    .readdir(dir, { recursive: true, withFileTypes: true })
    .catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}

export const blobObjects = (dataDir: string) => listFiles(path.join(dataDir, 'blobs', 'objects'));
export const blobTmp = (dataDir: string) => listFiles(path.join(dataDir, 'blobs', 'tmp'));
export const blobPath = (dataDir: string, key: string) => path.join(dataDir, 'blobs', 'objects', ...key.split('/'));
