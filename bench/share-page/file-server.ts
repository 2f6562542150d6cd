/**
 * The share-page baseline: a bare node:http server that answers every GET with one file,
 * streamed with fs.createReadStream (its length in Content-Length, text/html). Run as its
 * own process by bench/share-page.ts; the file comes in BENCH_SHARE_FILE, the port in
 * BENCH_SHARE_PORT. No framework, no database, no bridge: the floor for serving the same
 * bytes to the same number of concurrent viewers.
 */
import fs from 'node:fs';
import http from 'node:http';
import { pipeline } from 'node:stream';

const file = process.env['BENCH_SHARE_FILE'] ?? '';
const port = Number(process.env['BENCH_SHARE_PORT']);
const size = fs.statSync(file).size;

const server = http.createServer((req, res) => {
  if (req.url === '/health') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(size) });
  pipeline(fs.createReadStream(file), res, () => {});
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
