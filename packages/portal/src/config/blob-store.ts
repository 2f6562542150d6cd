import { ConfigError, type Env, integer, read, url } from './parse.ts';

/** An S3-compatible bucket holding the session files (docs/s3-storage.md). */
export interface S3Settings {
  kind: 's3';
  bucket: string;
  /** Key prefix of every object, without a trailing slash; '' for the bucket's root. */
  prefix: string;
  /** AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL; null: AWS itself, for the region. */
  endpoint: string | null;
  region: string;
  /** Bucket in the path (http://host/bucket/key), as MinIO and most self-hosted stores want. */
  forcePathStyle: boolean;
  /** From AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; null: the SDK's default chain (profile, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
  /** SVC_S3_CONNECT_TIMEOUT_MS: a connection to the store not open by then is given up. */
  connectTimeoutMs: number;
  /** SVC_S3_REQUEST_TIMEOUT_MS: a request on which the store sent or took nothing for this long is cut. */
  requestTimeoutMs: number;
}

export type BlobStoreConfig = { kind: 'fs' } | S3Settings;

const BLOB_URL_FORM = 'must be s3://<bucket>/<optional prefix> (unset: files under SVC_DATA_DIR/blobs)';
// S3's bucket naming rules (lowercase, digits, dots, hyphens; 3 to 63 characters).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PREFIX_SEGMENT = /^[A-Za-z0-9_.-]+$/;
/** Settings that mean something only for a bucket. */
const S3_ONLY = ['SVC_S3_FORCE_PATH_STYLE', 'SVC_S3_CONNECT_TIMEOUT_MS', 'SVC_S3_REQUEST_TIMEOUT_MS'];

function flag(env: Env, name: string): boolean | undefined {
  const raw = read(env, name)?.toLowerCase();
  if (raw === undefined) return undefined;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false (got "${raw}")`);
}

/**
 * SVC_BLOB_URL selects the store; endpoint, region and credentials come from the AWS SDK's
 * usual variables, read here because only the config module reads the environment.
 */
export function blobStoreConfig(env: Env): BlobStoreConfig {
  const raw = read(env, 'SVC_BLOB_URL');
  const pathStyle = flag(env, 'SVC_S3_FORCE_PATH_STYLE');
  if (raw === undefined) {
    for (const name of S3_ONLY)
      if (read(env, name) !== undefined) throw new ConfigError(name, 'is set but SVC_BLOB_URL is not');
    return { kind: 'fs' };
  }
  const match = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(raw);
  if (match === null) throw new ConfigError('SVC_BLOB_URL', `${BLOB_URL_FORM} (got "${raw}")`);
  const bucket = match[1]!;
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    throw new ConfigError(
      'SVC_BLOB_URL',
      `names an invalid bucket "${bucket}" (3 to 63 lowercase letters, digits, dots and hyphens)`,
    );
  const segments = (match[2] ?? '').split('/').filter((s) => s !== '');
  const bad = segments.find((s) => !PREFIX_SEGMENT.test(s) || s === '.' || s === '..');
  if (bad !== undefined)
    throw new ConfigError('SVC_BLOB_URL', `has an invalid prefix segment "${bad}" (letters, digits, ".", "_" and "-")`);

  const endpoint =
    url(env, 'AWS_ENDPOINT_URL_S3', ['http:', 'https:']) ?? url(env, 'AWS_ENDPOINT_URL', ['http:', 'https:']) ?? null;
  const region = read(env, 'AWS_REGION') ?? read(env, 'AWS_DEFAULT_REGION') ?? 'us-east-1';
  if (!/^[a-z0-9-]+$/.test(region))
    throw new ConfigError('AWS_REGION', `must be a region name such as eu-west-1 (got "${region}")`);
  const accessKeyId = read(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = read(env, 'AWS_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    // Never the secret's value in the message.
    const missing = accessKeyId === undefined ? 'AWS_ACCESS_KEY_ID' : 'AWS_SECRET_ACCESS_KEY';
    throw new ConfigError(
      missing,
      `must be set together with ${missing === 'AWS_ACCESS_KEY_ID' ? 'AWS_SECRET_ACCESS_KEY' : 'AWS_ACCESS_KEY_ID'}`,
    );
  }
  const sessionToken = read(env, 'AWS_SESSION_TOKEN');
  return {
    kind: 's3',
    bucket,
    prefix: segments.join('/'),
    endpoint,
    region,
    forcePathStyle: pathStyle ?? false,
    credentials:
      accessKeyId === undefined || secretAccessKey === undefined
        ? null
        : { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) },
    // Both well under SVC_BODY_IDLE_TIMEOUT_SECONDS (30 s): a silent store answers 503 before the idle cut.
    connectTimeoutMs: integer(env, 'SVC_S3_CONNECT_TIMEOUT_MS', 5000, 100, 120_000),
    requestTimeoutMs: integer(env, 'SVC_S3_REQUEST_TIMEOUT_MS', 5000, 100, 600_000),
  };
}
