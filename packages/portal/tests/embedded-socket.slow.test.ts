import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded.ts';
import { freePort } from '@svc/test-support/ports';
import { testTempDir } from '@svc/test-support/temp-dirs';

// The embedded server is reached through a Unix socket in the data dir (cheaper per round
// trip than loopback TCP), and still on 127.0.0.1 for tools; a data dir too deep for a
// socket path falls back to TCP only.
const started: { server: EmbeddedServer; dir: string }[] = [];

afterAll(async () => {
  for (const { server, dir } of started) {
    await server.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
});

async function start(dataDir: string): Promise<EmbeddedServer> {
  const port = await freePort();
  const server = await startEmbeddedPostgres({
    dataDir,
    port,
    logger: pino({ level: 'silent' }),
    settings: { fsync: 'off' },
  });
  started.push({ server, dir: dataDir });
  return server;
}

async function serverAddress(connectionString: string): Promise<string | null> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query<{ addr: string | null }>('SELECT host(inet_server_addr()) AS addr')).rows[0]!.addr;
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL listeners', () => {
  it('hands out a Unix socket URL under the data dir, and also listens on 127.0.0.1', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-sock-'));
    await fs.chmod(dir, 0o755);
    const server = await start(dir);
    const url = new URL(server.url);
    expect(url.searchParams.get('host')).toBe(path.join(dir, 'postgres-run'));
    await expect(fs.stat(path.join(dir, 'postgres-run', `.s.PGSQL.${server.port}`))).resolves.toMatchObject({});
    // A socket connection has no server address; the same URL without `host` goes over TCP.
    expect(await serverAddress(server.url)).toBeNull();
    url.searchParams.delete('host');
    expect(await serverAddress(url.toString())).toBe('127.0.0.1');
  });

  it('a data dir too deep for a socket path gets TCP only', async () => {
    const base = await testTempDir('svc-sock-deep-');
    await fs.chmod(base, 0o755);
    const dir = path.join(base, 'd'.repeat(50), 'e'.repeat(40));
    await fs.mkdir(dir, { recursive: true, mode: 0o755 });
    for (const d of [path.join(base, 'd'.repeat(50)), dir]) await fs.chmod(d, 0o755);
    const server = await start(dir);
    expect(new URL(server.url).searchParams.has('host')).toBe(false);
    expect(await serverAddress(server.url)).toBe('127.0.0.1');
  });
});
