import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as it arrived, body read whole. */
export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type RecordingHandler = (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) => void;

/**
 * A real node:http server on 127.0.0.1 that records every request and answers with whatever
 * handler the test sets; `hold` keeps an answer open until `close` (for timeouts).
 */
export interface RecordingServer {
  base: string;
  seen: Received[];
  handle(handler: RecordingHandler): void;
  hold(res: http.ServerResponse): void;
  close(): Promise<void>;
}

export async function startRecordingServer(): Promise<RecordingServer> {
  let handler: RecordingHandler = (_req, _body, res) => res.end();
  const seen: Received[] = [];
  const held = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    handle: (h) => {
      handler = h;
    },
    hold: (res) => held.add(res),
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
