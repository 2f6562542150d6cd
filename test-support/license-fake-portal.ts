import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A local HTTP server the license and config tests control: it counts requests and either
 * passes them on to a real portal ('proxy') or answers the way a broken portal would.
 * Not a test file (no .test.ts): shared by the license-*, config and upload-* tests.
 */
export type FakeMode =
  | 'proxy' // forward to the real portal and relay its answer
  | 'status500' // a server error with a JSON body
  | 'status404' // no such endpoint (an older portal)
  | 'garbage' // 200 with a body that is not JSON
  | 'wrong-json' // 200 with JSON that is not a validation result
  | 'hang' // accept the request, never answer
  | 'upload-ok'; // 200 with a canned upload answer (config precedence tests)

export interface SeenRequest {
  method: string;
  path: string;
  /** The x-api-key header as received (tests compare it; it is never printed). */
  apiKey: string | undefined;
  contentType: string | undefined;
  body: Buffer;
}

export interface FakePortal {
  /** http://127.0.0.1:<port> */
  origin: string;
  /** `${origin}/api/upload`: what the client is configured with. */
  uploadUrl: string;
  mode: FakeMode;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startFakePortal(realOrigin: string | null, mode: FakeMode = 'proxy'): Promise<FakePortal> {
  const sockets = new Set<Socket>();
  const fake: FakePortal = { origin: '', uploadUrl: '', mode, requests: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const apiKey = req.headers['x-api-key'];
      fake.requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        apiKey: typeof apiKey === 'string' ? apiKey : undefined,
        contentType: req.headers['content-type'],
        body,
      });
      void answer(fake.mode, req, body, res);
    });
  });
  async function answer(
    mode: FakeMode,
    req: http.IncomingMessage,
    body: Buffer,
    res: http.ServerResponse,
  ): Promise<void> {
    switch (mode) {
      case 'proxy': {
        if (realOrigin === null) throw new Error('proxy mode needs a real portal');
        const headers: Record<string, string> = {};
        for (const h of ['x-api-key', 'content-type', 'x-identity-token']) {
          const v = req.headers[h];
          if (typeof v === 'string') headers[h] = v;
        }
        const init: RequestInit = { method: req.method ?? 'GET', headers };
        if (body.length > 0) init.body = body;
        const upstream = await fetch(`${realOrigin}${req.url ?? '/'}`, init);
        const text = Buffer.from(await upstream.arrayBuffer());
        res.writeHead(upstream.status, {
          'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream',
        });
        res.end(text);
        return;
      }
      case 'status500':
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":"Internal server error"}');
        return;
      case 'status404':
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":"Not found"}');
        return;
      case 'garbage':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><body>captive portal: please log in</body></html>');
        return;
      case 'wrong-json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"valid":"yes","tier":"enterprise"}');
        return;
      case 'hang':
        return; // never answered; close() destroys the socket
      case 'upload-ok':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            success: true,
            session_id: 'fake',
            share_token: 'f'.repeat(64),
            share_url: 'http://fake/share/?token=' + 'f'.repeat(64),
            message: 'fake upload',
          }),
        );
        return;
    }
  }
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  fake.origin = `http://127.0.0.1:${port}`;
  fake.uploadUrl = `${fake.origin}/api/upload`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return fake;
}

/** An upload URL on a port nothing listens on. */
export async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/api/upload`;
}
