import net from 'node:net';

/**
 * An S3 endpoint that accepts connections and never answers: it reads whatever arrives and
 * writes nothing, as a store whose process hangs (or a black-holing middlebox) does. With
 * `forwardTo` it starts as a plain TCP relay to a real peer and goes silent on `silence()`.
 * It counts the connections open on it, so a test sees whether the portal lets them go.
 */
export interface SilentStore {
  port: number;
  endpoint: string;
  /** Connections accepted and not closed yet. */
  open(): number;
  /** Connections accepted so far. */
  accepted(): number;
  /** From now on never answer; relayed connections are cut, so no kept-alive socket gets past. */
  silence(): void;
  close(): Promise<void>;
}

export async function startSilentStore(opts: { forwardTo?: number } = {}): Promise<SilentStore> {
  let silent = opts.forwardTo === undefined;
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const relays = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    if (silent || opts.forwardTo === undefined) {
      socket.resume();
      return;
    }
    const upstream = net.connect({ port: opts.forwardTo, host: '127.0.0.1' });
    relays.add(socket);
    upstream.on('error', () => socket.destroy());
    socket.once('close', () => {
      relays.delete(socket);
      upstream.destroy();
    });
    upstream.once('close', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    endpoint: `http://127.0.0.1:${port}`,
    open: () => sockets.size,
    accepted: () => accepted,
    silence() {
      silent = true;
      for (const s of relays) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
