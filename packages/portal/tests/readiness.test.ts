import net from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseReady } from '../src/operations/readiness.ts';
import { deadAddress } from '@svc/test-support/ports';
import { createTestDatabase } from '@svc/test-support/portal';

// The readiness rule of GET /readyz against real servers: a database that answers, nothing
// listening, and a server that accepts the connection but never answers.
const pools: pg.Pool[] = [];
const pool = (connectionString: string) => {
  const p = new pg.Pool({ connectionString, max: 1, connectionTimeoutMillis: 10_000 });
  p.on('error', () => undefined);
  pools.push(p);
  return p;
};

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
});

describe('databaseReady', () => {
  it('is true while the database answers SELECT 1', async () => {
    expect(await databaseReady(pool(await createTestDatabase()))).toBe(true);
  });

  it('is false when nothing listens', async () => {
    const dead = await deadAddress();
    expect(await databaseReady(pool(`postgres://svc@127.0.0.1:${dead.port}/none`))).toBe(false);
    await dead.close();
  });

  it('is false after the timeout when the server never answers', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const started = Date.now();
      expect(await databaseReady(pool(`postgres://svc@127.0.0.1:${port}/none`), 300)).toBe(false);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(5_000);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});
