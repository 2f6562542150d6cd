import net from 'node:net';

/**
 * A loopback listener that greets as an old OpenSSH (a finding for a quick scan of 127.0.0.1)
 * and hangs up once the client speaks: the SSH scripts would otherwise wait for a key exchange.
 */
export async function listenOldSshBanner(): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer((s) => {
    s.on('error', () => {});
    s.on('data', () => s.end());
    s.setTimeout(3000, () => s.destroy());
    s.write('SSH-2.0-OpenSSH_7.4\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as net.AddressInfo).port };
}
