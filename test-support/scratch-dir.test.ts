import { describe, expect, it } from 'vitest';
import { chooseScratchParent, SHM } from './scratch-dir.ts';

const GIB = 1024 ** 3;
const tmpfs = (freeGib: number) => ({ type: 0x01021994, bsize: 4096, bavail: (freeGib * GIB) / 4096 });

describe('chooseScratchParent', () => {
  it('takes /dev/shm when it is a tmpfs with 8 GiB free', () => {
    expect(chooseScratchParent(undefined, tmpfs(8), '/tmp')).toBe(SHM);
  });

  it('keeps to the temp dir when /dev/shm is small, not a tmpfs or missing', () => {
    expect(chooseScratchParent(undefined, tmpfs(7.9), '/tmp')).toBe('/tmp');
    expect(chooseScratchParent(undefined, { ...tmpfs(100), type: 0xef53 }, '/tmp')).toBe('/tmp');
    expect(chooseScratchParent(undefined, null, '/var/tmp')).toBe('/var/tmp');
  });

  it('takes SVC_TEST_SCRATCH_DIR over both', () => {
    expect(chooseScratchParent('/srv/scratch', tmpfs(100), '/tmp')).toBe('/srv/scratch');
    expect(chooseScratchParent('', tmpfs(100), '/tmp')).toBe(SHM);
  });
});
