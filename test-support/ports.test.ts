import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { deadAddress, listenOnLoopback } from './ports.ts';

function connect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('data', (d) => resolve(`data ${d}`));
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    s.on('close', () => resolve('closed'));
  });
}

describe('test ports', () => {
  it('a held port stays taken until it is closed', async () => {
    const held = await listenOnLoopback((s) => s.end('hi'));
    expect(held.port).toBeGreaterThan(0);
    const other = net.createServer();
    const clash = await new Promise<string>((resolve) => {
      other.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      other.listen(held.port, '127.0.0.1', () => resolve('listening'));
    });
    expect(clash).toBe('EADDRINUSE');
    expect(await connect(held.port)).toBe('data hi');
    await held.close();
  });

  it('a dead address drops every connection at once', async () => {
    const dead = await deadAddress();
    expect(await connect(dead.port)).toMatch(/^(ECONNRESET|closed)$/);
    await dead.close();
  });
});
