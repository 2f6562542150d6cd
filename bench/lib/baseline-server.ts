/**
 * The baseline: a bare node:http server that answers fixed, pre-built responses.
 * Run as its own process by baseline.ts; configuration comes as JSON in
 * BENCH_BASELINE_CONFIG, or in the file BENCH_BASELINE_CONFIG_FILE names (see BaselineConfig).
 * No framework, no routing table beyond an exact method+path match, no serialization: the floor
 * for answering the same bytes.
 */
import fs from 'node:fs';
import http from 'node:http';

export interface BaselineRoute {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  /** The response body, base64. */
  body: string;
}

export interface BaselineConfig {
  host: string;
  port: number;
  routes: BaselineRoute[];
}

interface Prepared {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

function main(): void {
  // Large route tables (many pages of answers) come in a file: one environment string is limited to 128 KiB.
  const file = process.env['BENCH_BASELINE_CONFIG_FILE'];
  const raw = file ? fs.readFileSync(file, 'utf8') : process.env['BENCH_BASELINE_CONFIG'];
  if (!raw) {
    console.error('neither BENCH_BASELINE_CONFIG nor BENCH_BASELINE_CONFIG_FILE is set');
    process.exit(2);
  }
  const config = JSON.parse(raw) as BaselineConfig;
  const table = new Map<string, Prepared>();
  for (const r of config.routes) {
    const body = Buffer.from(r.body, 'base64');
    table.set(`${r.method.toUpperCase()} ${r.path}`, {
      status: r.status,
      headers: { ...r.headers, 'content-length': String(body.length) },
      body,
    });
  }
  const notFound = Buffer.from('{"error":"Not found"}');

  const server = http.createServer((req, res) => {
    const hit = table.get(`${req.method} ${req.url}`);
    const answer = (): void => {
      if (hit) {
        res.writeHead(hit.status, hit.headers);
        res.end(hit.body);
      } else {
        res.writeHead(404, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': String(notFound.length),
        });
        res.end(notFound);
      }
    };
    // Requests with a body (later benchmarks POST) are read to the end first, as any server must.
    if (req.method === 'GET' || req.method === 'HEAD') answer();
    else req.on('end', answer).resume();
  });
  // Fastify's default, so idle keep-alive connections are treated alike.
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
