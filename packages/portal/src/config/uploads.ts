import { DEFAULT_UPLOAD_LIMIT_MB, MAX_UPLOAD_LIMIT_MB, UPLOAD_LIMIT_SETTING, uploadLimitBytes } from '@svc/protocol';
import { type Env, integer, read } from './parse.ts';

/** What an upload may take: its size, and the disk room it must leave (docs/security.md#storage, docs/deployment.md#disk). */
export interface UploadLimits {
  /** SVC_UPLOAD_MAX_MB in bytes: the whole body of POST /api/upload, and one PUT /api/refresh file, at most. */
  maxBytes: number;
  /**
   * SVC_MIN_FREE_DISK_MB: free space the data directory's disk keeps, counting the uploads in
   * flight; 0 turns it off; null (unset) means the default share of the disk (`diskFloorBytes`).
   */
  minFreeDiskMb: number | null;
}

export function uploadLimits(env: Env): UploadLimits {
  return {
    maxBytes: uploadLimitBytes(integer(env, UPLOAD_LIMIT_SETTING, DEFAULT_UPLOAD_LIMIT_MB, 1, MAX_UPLOAD_LIMIT_MB)),
    minFreeDiskMb:
      read(env, 'SVC_MIN_FREE_DISK_MB') === undefined ? null : integer(env, 'SVC_MIN_FREE_DISK_MB', 0, 0, 100_000_000),
  };
}
