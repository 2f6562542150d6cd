import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endingOf, run } from '../src/cli/main.ts';
import { CliError, EXIT_CODES, usageError } from '../src/cli/output.ts';
import { ConfigError } from '../src/kit/config/settings.ts';
import { HttpError } from '../src/kit/http/request.ts';
import { PortalError, type PortalErrorKind } from '../src/kit/portal/errors.ts';
import { capturedContext } from './helpers/captured-cli.ts';

/** docs/cli.md#exit-codes: every kind of ending has one exit code, and every error one kind. */

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-exit-codes-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function svc(args: string[], now: () => Date = () => new Date()) {
  const { ctx, stdout, stderr } = capturedContext(dir, now);
  const code = await run(args, ctx);
  return { code, stdout: stdout(), stderr: stderr() };
}

describe('the exit code table', () => {
  it('gives each kind the code docs/cli.md names: 2 nothing was attempted, 1 it ran and failed', () => {
    expect(EXIT_CODES).toEqual({ usage: 2, config: 2, failed: 1, portal: 1, unexpected: 1 });
  });

  it("turns each of the client's errors into its kind, with its message as the line on stderr", () => {
    const ending = (err: unknown) => {
      const { kind, message } = endingOf(err);
      return { kind, code: EXIT_CODES[kind], message };
    };
    expect(ending(usageError('--targets is required'))).toEqual({
      kind: 'usage',
      code: 2,
      message: '--targets is required',
    });
    expect(ending(new CliError('smoke test failed: health'))).toEqual({
      kind: 'failed',
      code: 1,
      message: 'smoke test failed: health',
    });
    expect(ending(new CliError('HTTP 403: forbidden', 'portal'))).toEqual({
      kind: 'portal',
      code: 1,
      message: 'HTTP 403: forbidden',
    });
    expect(ending(new ConfigError('Config file not found: x.conf'))).toEqual({
      kind: 'config',
      code: 2,
      message: 'Config file not found: x.conf',
    });
    const setup: PortalErrorKind[] = ['credentials', 'config'];
    const portal: PortalErrorKind[] = ['unreachable', 'timeout', 'http', 'invalid_answer', 'file', 'too_large'];
    for (const k of setup)
      expect(ending(new PortalError(k, `${k} x`))).toEqual({ kind: 'config', code: 2, message: `${k} x` });
    for (const k of portal)
      expect(ending(new PortalError(k, `${k} x`))).toEqual({ kind: 'portal', code: 1, message: `${k} x` });
    expect(ending(new HttpError('network', 'ECONNREFUSED'))).toEqual({
      kind: 'portal',
      code: 1,
      message: 'ECONNREFUSED',
    });
    expect(ending(new HttpError('timeout', 'no answer in 30 s'))).toEqual({
      kind: 'portal',
      code: 1,
      message: 'no answer in 30 s',
    });
    expect(ending(new HttpError('file', 'cannot read a.log'))).toEqual({
      kind: 'failed',
      code: 1,
      message: 'cannot read a.log',
    });
  });

  it('an error of no known kind is unexpected: exit 1 with its stack', () => {
    const planted = new TypeError('planted');
    expect(endingOf(planted)).toEqual({ kind: 'unexpected', message: `unexpected failure: ${planted.stack}` });
    expect(endingOf('planted')).toEqual({ kind: 'unexpected', message: 'unexpected failure: planted' });
  });
});

describe('svc exits with the code of how the command ended', () => {
  it('an unknown option is a usage error: 2', async () => {
    const r = await svc(['--no-such-option']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: unknown option '--no-such-option'");
  });

  it('a file that does not exist is a usage error: 2', async () => {
    const missing = path.join(dir, 'missing');
    expect(await svc(['export', '-f', 'csv', missing])).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: ${missing} does not exist\n`,
    });
  });

  it('a config file that does not exist is a configuration error: 2', async () => {
    const missing = path.join(dir, 'missing.conf');
    expect(await svc(['license', 'status', '-c', missing])).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: Config file not found: ${missing}\n`,
    });
  });

  it('an error planted where no command expects one still ends the run: exit 1, unexpected failure', async () => {
    const r = await svc(['synthetic-collection', '--target', '10.20.0.0/24', '-o', path.join(dir, 'out')], () => {
      throw new Error('planted clock failure');
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: unexpected failure: Error: planted clock failure\n {4}at /);
    await expect(fs.stat(path.join(dir, 'out'))).rejects.toThrow('ENOENT');
  });
});
