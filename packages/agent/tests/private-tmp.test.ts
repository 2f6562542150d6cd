import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testTempDir } from '@svc/test-support/temp-dirs';
import { withPrivateTmp } from '../src/private-tmp.ts';

describe('withPrivateTmp', () => {
  it('gives the run a directory of its own inside TMPDIR and removes it with what the run left', async () => {
    const base = await testTempDir('private-tmp-');
    const warnings: string[] = [];
    let seen = '';
    const out = await withPrivateTmp(
      { TMPDIR: base, KEEP: 'yes' },
      (m) => warnings.push(m),
      async (env) => {
        seen = env['TMPDIR'] as string;
        expect(env['KEEP']).toBe('yes');
        fs.mkdirSync(path.join(seen, 'svc-scan-tools-x'));
        fs.writeFileSync(path.join(seen, 'svc-scan-tools-x', 'output.txt'), 'customer data');
        return 42;
      },
    );
    expect(out).toBe(42);
    expect(path.dirname(seen)).toBe(base);
    expect(path.basename(seen)).toMatch(/^svcd-scan-/);
    expect(fs.readdirSync(base)).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('removes it when the run throws, and the error is the run’s', async () => {
    const base = await testTempDir('private-tmp-');
    const run = withPrivateTmp(
      { TMPDIR: base },
      () => {},
      async (env) => {
        fs.writeFileSync(path.join(env['TMPDIR'] as string, 'partial'), 'x');
        throw new Error('scan failed');
      },
    );
    await expect(run).rejects.toThrow('scan failed');
    expect(fs.readdirSync(base)).toEqual([]);
  });

  it('warns and runs with the shared directory when its own cannot be made', async () => {
    const missing = path.join(await testTempDir('private-tmp-'), 'gone');
    const warnings: string[] = [];
    const env = await withPrivateTmp(
      { TMPDIR: missing },
      (m) => warnings.push(m),
      async (e) => e,
    );
    expect(env['TMPDIR']).toBe(missing);
    expect(warnings).toEqual([
      expect.stringMatching(/^no private temp directory for the scan \(ENOENT.*it uses the shared one$/),
    ]);
  });
});
