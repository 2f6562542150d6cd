import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index.ts';

function problem(env: Record<string, string>): string {
  try {
    loadConfig(env, '/srv/portal');
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(env)}`);
}

const uploads = (env: Record<string, string>) => loadConfig(env, '/srv/portal').uploads;

describe('SVC_UPLOAD_MAX_MB and SVC_MIN_FREE_DISK_MB', () => {
  it("default to the contract's 25 MB and to the disk's share (null: computed from the disk's size)", () => {
    expect(uploads({})).toEqual({ maxBytes: 25 * 1024 * 1024, minFreeDiskMb: null });
    expect(uploads({ SVC_UPLOAD_MAX_MB: ' ', SVC_MIN_FREE_DISK_MB: '' })).toEqual({
      maxBytes: 25 * 1024 * 1024,
      minFreeDiskMb: null,
    });
  });

  it('read whole numbers: the limit in MB of 1024 x 1024 bytes (1 to 512), the floor in MB (0: off)', () => {
    expect(uploads({ SVC_UPLOAD_MAX_MB: '1', SVC_MIN_FREE_DISK_MB: '0' })).toEqual({
      maxBytes: 1024 * 1024,
      minFreeDiskMb: 0,
    });
    expect(uploads({ SVC_UPLOAD_MAX_MB: '512', SVC_MIN_FREE_DISK_MB: '2048' })).toEqual({
      maxBytes: 512 * 1024 * 1024,
      minFreeDiskMb: 2048,
    });
  });

  it('refuse anything else, naming the variable', () => {
    expect(problem({ SVC_UPLOAD_MAX_MB: '0' })).toBe(
      'Invalid configuration: SVC_UPLOAD_MAX_MB must be between 1 and 512 (got 0)',
    );
    expect(problem({ SVC_UPLOAD_MAX_MB: '513' })).toBe(
      'Invalid configuration: SVC_UPLOAD_MAX_MB must be between 1 and 512 (got 513)',
    );
    expect(problem({ SVC_UPLOAD_MAX_MB: '25MB' })).toBe(
      'Invalid configuration: SVC_UPLOAD_MAX_MB must be a whole number between 1 and 512 (got "25MB")',
    );
    expect(problem({ SVC_MIN_FREE_DISK_MB: '-1' })).toBe(
      'Invalid configuration: SVC_MIN_FREE_DISK_MB must be a whole number between 0 and 100000000 (got "-1")',
    );
  });
});
