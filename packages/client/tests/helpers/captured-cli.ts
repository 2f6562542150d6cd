import { PassThrough } from 'node:stream';
import type { CliContext } from '../../src/cli/context.ts';

/**
 * A context for `svc` run in this process (cli/main.ts `run`): output captured as from pipes
 * (no terminal, NO_COLOR), no environment, HOME `home`, the clock `now`.
 */
export function capturedContext(
  home: string,
  now: () => Date = () => new Date(),
): { ctx: CliContext; stdout: () => string; stderr: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = { out: '', err: '' };
  stdout.on('data', (c: Buffer) => (text.out += c.toString()));
  stderr.on('data', (c: Buffer) => (text.err += c.toString()));
  const ctx: CliContext = {
    streams: { stdout, stderr, env: { NO_COLOR: '1' } },
    env: {},
    home,
    now,
    stdinIsTTY: false,
  };
  return { ctx, stdout: () => text.out, stderr: () => text.err };
}
