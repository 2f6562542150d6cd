import net from 'node:net';

/**
 * Ports for tests. A server the test owns listens on 127.0.0.1 port 0 and reports the port it
 * got; a port is never closed and then handed on, since another process could take it in between.
 */

export interface HeldPort {
  server: net.Server;
  port: number;
  close(): Promise<void>;
}

/** A loopback listener on a port the kernel picked, held open until `close()`. */
export function listenOnLoopback(onConnection: (socket: net.Socket) => void = (s) => s.destroy()): Promise<HeldPort> {
  return new Promise((resolve, reject) => {
    const server = net.createServer(onConnection);
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({
        server,
        port,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}

/**
 * A port held by a loopback listener with SO_REUSEPORT, for a server of the test that must know
 * its port before it listens (a portal whose base URL names it): the server listens there with
 * `reusePort` too, then `close()` lets go of the holder. Nothing else can bind it in between.
 */
export function holdPort(): Promise<HeldPort> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((s) => s.destroy());
    server.on('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', reusePort: true }, () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({ server, port, close: () => new Promise<void>((done) => server.close(() => done())) });
    });
  });
}

/**
 * An address where no service answers: a held listener that drops every connection at once, so
 * a client fails fast as with nothing listening, and no other process can appear there.
 */
export async function deadAddress(): Promise<HeldPort> {
  const held = await listenOnLoopback((s) => s.resetAndDestroy());
  held.server.unref();
  return held;
}

const handedOut = new Set<number>();

/**
 * A port number picked in advance: the kernel's choice, closed and handed on, so another process
 * could take it before it is used (the start then fails loudly). Only where nothing else works:
 * PostgreSQL, which can neither listen on port 0 nor take a listening socket, a port that must
 * refuse connections (ECONNREFUSED, which a held listener cannot give), and a portal that must
 * come back on the port it had after it stopped (an outage). Everything else uses
 * `listenOnLoopback`, `holdPort`, `deadAddress` or PORT=0. The benchmarks use it for the servers
 * they start as processes. A port this process handed out already is never handed out again, so
 * two calls in a row differ even before either port is bound.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.unref();
      srv.on('error', reject);
      srv.listen({ host, port: 0, exclusive: true }, () => {
        const addr = srv.address();
        srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`could not find a free port on ${host}`);
}
