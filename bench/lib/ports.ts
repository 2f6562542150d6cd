import net from 'node:net';

const handedOut = new Set<number>();

/**
 * A TCP port that is free on `host` right now (the OS picks it, we release it).
 * Ports already handed out by this process are skipped, so two calls in a row never
 * return the same port even before either is bound.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.unref();
      server.once('error', reject);
      server.listen({ host, port: 0, exclusive: true }, () => {
        const address = server.address();
        const p = typeof address === 'object' && address !== null ? address.port : 0;
        server.close(() => resolve(p));
      });
    });
    if (port > 0 && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`could not find a free port on ${host}`);
}
