import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/** StartOptions.reusePort: the portal takes over a port the test held, and its base URL names it. */
describe('a portal on a port held for it', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal({ ownBaseUrl: true });
  });
  afterAll(async () => {
    await portal.close();
  });

  it('listens where its base URL says', async () => {
    expect(portal.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(portal.ctx.config.baseUrl).toBe(portal.url);
    const res = await fetch(`${portal.url}/identity/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { issuer: string }).issuer).toBe(`${portal.url}/identity`);
  });

  it('keeps the port: a listener without SO_REUSEPORT cannot bind it', async () => {
    const port = Number(new URL(portal.url).port);
    const other = net.createServer();
    const outcome = await new Promise<string>((resolve) => {
      other.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      other.listen(port, '127.0.0.1', () => resolve('listening'));
    });
    if (outcome === 'listening') other.close();
    expect(outcome).toBe('EADDRINUSE');
  });
});
