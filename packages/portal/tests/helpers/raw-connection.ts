import net from 'node:net';

/** How long a test waits for the portal to close a connection before failing. */
export const HANG_MS = 15_000;

export interface RawConnection {
  socket: net.Socket;
  /** Everything received. */
  data(): string;
  /** Resolves when the server has closed the connection (or rejects after HANG_MS). */
  closed: Promise<void>;
}

/**
 * A raw TCP connection to a test portal, for requests written byte by byte. `from` is the local
 * address (all of 127.0.0.0/8 is loopback on Linux); `track` collects the sockets so a test can
 * destroy them at the end whatever happened.
 */
export async function connectRaw(
  url: string,
  opts: { from?: string; track?: Set<net.Socket> } = {},
): Promise<RawConnection> {
  const socket = net.connect({ port: Number(new URL(url).port), host: '127.0.0.1', localAddress: opts.from });
  opts.track?.add(socket);
  let received = '';
  socket.on('data', (d) => (received += d.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`connection still open after ${HANG_MS} ms`)), HANG_MS);
    socket.once('close', () => {
      clearTimeout(t);
      resolve();
    });
  });
  closed.catch(() => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, data: () => received, closed };
}
