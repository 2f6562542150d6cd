import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * An upload refused before its body is read (a bad key is refused in the route's preHandler)
 * must not leave the connection waiting for the rest of the body: a client that stops
 * sending after the 403 held the portal's shutdown until keep-alive gave up (~72 s).
 */
describe('POST /api/upload refused before the body is read', () => {
  let portal: TestPortal | undefined;
  afterAll(async () => {
    await portal?.close();
  });

  it('a client that stops sending after the 403 does not hold the shutdown', async () => {
    portal = await startTestPortal();
    const { port } = new URL(portal.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.on('error', () => undefined);
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (text.includes('\r\n\r\n')) resolve(text);
      });
    });
    socket.write(
      'POST /api/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\n' +
        'x-api-key: svc_pro_0000000000000000000000000000000000000000000000000000000000000000\r\nContent-Length: 5000000\r\n\r\n',
    );
    socket.write(Buffer.alloc(64 * 1024, 'x'));
    expect((await answer).split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');

    // The client sends nothing more and keeps its socket open.
    const started = Date.now();
    await portal.close();
    portal = undefined;
    // The refused body is given the same 10 s linger as a 413's, then the socket is cut.
    expect(Date.now() - started).toBeLessThan(20_000);
    socket.destroy();
  });
});
