/**
 * The upload baseline: a bare node:http server that streams each request body to a new
 * file and hashes it (SHA-256) on the way, then answers a small JSON with the byte count
 * and the digest. Run as its own process by bench/upload.ts; configuration comes as JSON
 * in BENCH_UPLOAD_SINK_CONFIG (see SinkConfig).
 *
 *   POST /api/upload        body -> file + SHA-256, answer once the file is closed
 *   POST /api/upload-fsync  the same, plus fsync of the file before answering
 *   GET  /health            200
 *
 * No framework, no multipart parsing, no key check, no database: the floor for receiving
 * the same bytes and storing them. Files are kept (like the portal keeps its blobs) until
 * the benchmark removes the directory.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

export interface SinkConfig {
  host: string;
  port: number;
  /** Where the bodies are written (one file per request). */
  dir: string;
}

export interface SinkAnswer {
  ok: true;
  bytes: number;
  sha256: string;
}

function main(): void {
  const raw = process.env['BENCH_UPLOAD_SINK_CONFIG'];
  if (!raw) {
    console.error('BENCH_UPLOAD_SINK_CONFIG is not set');
    process.exit(2);
  }
  const config = JSON.parse(raw) as SinkConfig;
  let seq = 0;

  const answer = (res: http.ServerResponse, status: number, body: unknown): void => {
    const bytes = Buffer.from(JSON.stringify(body));
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(bytes.length),
    });
    res.end(bytes);
  };

  const store = async (req: http.IncomingMessage, res: http.ServerResponse, fsync: boolean): Promise<void> => {
    const file = path.join(config.dir, `${++seq}-${randomBytes(6).toString('hex')}`);
    const hash = createHash('sha256');
    let bytes = 0;
    try {
      req.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
      });
      await pipeline(req, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
      if (fsync) {
        const fh = await fs.open(file, 'r');
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
      }
      const body: SinkAnswer = { ok: true, bytes, sha256: hash.digest('hex') };
      answer(res, 200, body);
    } catch (err) {
      if (!res.headersSent && !res.destroyed)
        answer(res, 500, { ok: false, error: err instanceof Error ? err.message : String(err) });
    }
  };

  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      answer(res, 200, { ok: true });
      return;
    }
    if (req.method === 'POST' && (req.url === '/api/upload' || req.url === '/api/upload-fsync')) {
      void store(req, res, req.url === '/api/upload-fsync');
      return;
    }
    req.resume();
    answer(res, 404, { ok: false, error: 'Not found' });
  });
  // Fastify's defaults, so connections are treated alike.
  server.keepAliveTimeout = 72_000;
  server.listen(config.port, config.host);

  const shutdown = (): void => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2_000).unref();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main();
