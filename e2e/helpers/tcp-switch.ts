import net from 'node:net';

/**
 * A TCP forwarder in front of the real portal that can be switched off (every connection,
 * open or new, is reset: a portal outage as the agent sees it) and on again. It also notes
 * when each request line it forwards was sent, to count the agent's calls.
 */
export interface TcpSwitch {
  port: number;
  url: string;
  /** Request lines seen (`POST /api/health`...), with their time. */
  requests: { line: string; at: number }[];
  down(): void;
  up(): void;
  close(): Promise<void>;
}

export async function startTcpSwitch(targetPort: number): Promise<TcpSwitch> {
  let on = true;
  const sockets = new Set<net.Socket>();
  const requests: { line: string; at: number }[] = [];
  const server = net.createServer((client) => {
    if (!on) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (chunk: Buffer) => {
      for (const m of chunk.toString('latin1').matchAll(/^(GET|POST|PUT|PATCH|DELETE) (\/api\/[^\s?]*)/gm))
        requests.push({ line: `${m[1]} ${m[2]}`, at: Date.now() });
    });
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    down() {
      on = false;
      for (const s of sockets) s.resetAndDestroy();
      sockets.clear();
    },
    up() {
      on = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
