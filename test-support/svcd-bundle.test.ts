import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newerSource } from './svcd-bundle.ts';
import { testTempDir } from './temp-dirs.ts';

describe('the svcd bundle check of the global set-up (test-support/svcd-bundle.ts)', () => {
  it('names a source modified after the bundle, the bundle when it is missing, else nothing', async () => {
    const root = await testTempDir('svcd-bundle-');
    const src = path.join(root, 'src', 'deep');
    fs.mkdirSync(src, { recursive: true });
    const bundle = path.join(root, 'svcd.mjs');
    const source = path.join(src, 'daemon.ts');
    fs.writeFileSync(source, 'export {};\n');
    fs.writeFileSync(path.join(src, 'notes.md'), '');
    expect(newerSource(bundle, [path.join(root, 'src')])).toBe(bundle);

    fs.writeFileSync(bundle, '');
    const old = new Date('2026-01-01T00:00:00Z');
    fs.utimesSync(source, old, old);
    fs.utimesSync(bundle, new Date('2026-01-02T00:00:00Z'), new Date('2026-01-02T00:00:00Z'));
    expect(newerSource(bundle, [path.join(root, 'src')])).toBeNull();

    fs.utimesSync(source, new Date('2026-01-03T00:00:00Z'), new Date('2026-01-03T00:00:00Z'));
    expect(newerSource(bundle, [path.join(root, 'src')])).toBe(source);
  });
});
