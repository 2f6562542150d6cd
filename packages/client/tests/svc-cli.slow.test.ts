import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, runCli, SVC, tool } from '@svc/test-support/cli';

// The `svc` program as a user meets it: help, version, usage errors and the tools/ shims.
describe('svc', () => {
  it('--help lists every command and the exit codes; exit 0', async () => {
    const r = await runCli(SVC, ['--help']);
    expect(r.code).toBe(0);
    for (const cmd of [
      'upload',
      'license',
      'api-debug',
      'e2e-smoke-test',
      'pi-validate',
      'dependency-check',
      'synthetic-collection',
      'export',
    ])
      expect(r.stdout).toMatch(new RegExp(`^  ${cmd}\\b`, 'm'));
    expect(r.stdout).toContain('Exit codes: 0 done; 1 the operation failed');
    expect(r.stderr).toBe('');
  });

  it('--version prints the client version', async () => {
    const pkg = JSON.parse(await fs.readFile(path.join(REPO, 'packages/client/package.json'), 'utf8')) as {
      version: string;
    };
    const r = await runCli(SVC, ['--version']);
    expect(r).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it('an unknown command or option is a usage error: exit 2 with a one-line reason', async () => {
    const unknown = await runCli(SVC, ['bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^error: unknown command 'bogus'/m);
    expect(unknown.stdout).toBe('');
    const badOption = await runCli(SVC, ['upload', '--bogus']);
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toMatch(/unknown option '--bogus'/);
    const missingArg = await runCli(SVC, ['upload']);
    expect(missingArg.code).toBe(2);
    expect(missingArg.stderr).toMatch(/missing required argument 'session'/);
  });

  it('a missing config file is a usage error naming the file', async () => {
    const r = await runCli(SVC, ['license', 'status', '-c', '/nonexistent/svc.conf']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('error: Config file not found: /nonexistent/svc.conf');
  });

  it('every tool of docs/cli.md exists under tools/, is executable and answers -h with its usage', async () => {
    for (const [name, sub] of [
      ['pi_validate.sh', 'pi-validate'],
      ['dependency_check.sh', 'dependency-check'],
      ['e2e_smoke_test.sh', 'e2e-smoke-test'],
      ['api_debug.sh', 'api-debug'],
      ['synthetic_collection.sh', 'synthetic-collection'],
    ] as const) {
      await fs.access(tool(name), fs.constants.X_OK);
      const r = await runCli(tool(name), ['-h']);
      expect(r.code, name).toBe(0);
      expect(r.stdout, name).toContain(`Usage: svc ${sub}`);
    }
  });

  it('runs through a symlink to the shim (installed into a bin directory)', async () => {
    const dir = await fs.mkdtemp(path.join(REPO, 'node_modules', '.svc-link-'));
    try {
      await fs.symlink(tool('api_debug.sh'), path.join(dir, 'api_debug.sh'));
      const r = await runCli(path.join(dir, 'api_debug.sh'), ['-h']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Usage: svc api-debug');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a Node.js too old to run TypeScript, with the reason', async () => {
    const dir = await fs.mkdtemp(path.join(REPO, 'node_modules', '.svc-oldnode-'));
    try {
      const fake = path.join(dir, 'node');
      await fs.writeFile(fake, '#!/bin/sh\necho 20.11.1\n', { mode: 0o755 });
      const r = await runCli(SVC, ['--help'], { env: { SVC_NODE: fake } });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('Node.js 22.18 or later is required');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
