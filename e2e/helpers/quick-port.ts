import net from 'node:net';

/**
 * A loopback listener on a port of the quick profile's fixed list (the first free one of a few),
 * answering a line and closing: something for a quick scan of 127.0.0.1 to find.
 */
export async function listenOnQuickPort(): Promise<net.Server> {
  for (const candidate of [873, 990, 9200, 8443, 5900, 2049, 8080]) {
    const server = net.createServer((s) => {
      s.on('error', () => undefined);
      s.end('hello\r\n');
      s.setTimeout(1000, () => s.destroy());
    });
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(candidate, '127.0.0.1', () => resolve(true));
    });
    if (ok) return server;
  }
  throw new Error('no port of the quick profile is free on 127.0.0.1');
}
