import { describe, expect, it } from 'vitest';
import { blobStoreConfig } from './blob-store.ts';
import { ConfigError } from './parse.ts';

/** SVC_BLOB_URL and the AWS variables beside it (docs/s3-storage.md). */

const problem = (env: Record<string, string>) => {
  try {
    blobStoreConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('no ConfigError');
};

describe('blobStoreConfig', () => {
  it('unset: the file store, whatever AWS variables the environment has', () => {
    expect(blobStoreConfig({})).toStrictEqual({ kind: 'fs' });
    expect(blobStoreConfig({ SVC_BLOB_URL: ' ', AWS_REGION: 'eu-west-1' })).toStrictEqual({ kind: 'fs' });
  });

  it('s3://bucket/prefix with endpoint, region, credentials and path style from the usual variables', () => {
    expect(
      blobStoreConfig({
        SVC_BLOB_URL: 's3://scans.example-1/portal/sessions/',
        AWS_ENDPOINT_URL: 'http://ignored.example',
        AWS_ENDPOINT_URL_S3: 'https://minio.internal:9000',
        AWS_REGION: 'eu-central-1',
        AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'secret',
        AWS_SESSION_TOKEN: 'token',
        SVC_S3_FORCE_PATH_STYLE: 'true',
      }),
    ).toStrictEqual({
      kind: 's3',
      bucket: 'scans.example-1',
      prefix: 'portal/sessions',
      endpoint: 'https://minio.internal:9000',
      region: 'eu-central-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token' },
      connectTimeoutMs: 5000,
      requestTimeoutMs: 5000,
    });
  });

  it('defaults: the bucket root, AWS itself in us-east-1 (or AWS_DEFAULT_REGION), virtual-host style, the SDK credential chain', () => {
    expect(blobStoreConfig({ SVC_BLOB_URL: 's3://bucket' })).toStrictEqual({
      kind: 's3',
      bucket: 'bucket',
      prefix: '',
      endpoint: null,
      region: 'us-east-1',
      forcePathStyle: false,
      credentials: null,
      connectTimeoutMs: 5000,
      requestTimeoutMs: 5000,
    });
    expect(blobStoreConfig({ SVC_BLOB_URL: 's3://bucket/', AWS_DEFAULT_REGION: 'ap-south-1' })).toMatchObject({
      prefix: '',
      region: 'ap-south-1',
      endpoint: null,
    });
    expect(blobStoreConfig({ SVC_BLOB_URL: 's3://bucket', AWS_ENDPOINT_URL: 'http://127.0.0.1:9000' })).toMatchObject({
      endpoint: 'http://127.0.0.1:9000',
    });
  });

  it.each([
    [
      'file:///srv/blobs',
      'SVC_BLOB_URL must be s3://<bucket>/<optional prefix> (unset: files under SVC_DATA_DIR/blobs) (got "file:///srv/blobs")',
    ],
    [
      's3://',
      'SVC_BLOB_URL must be s3://<bucket>/<optional prefix> (unset: files under SVC_DATA_DIR/blobs) (got "s3://")',
    ],
    [
      's3://b/x?y',
      'SVC_BLOB_URL must be s3://<bucket>/<optional prefix> (unset: files under SVC_DATA_DIR/blobs) (got "s3://b/x?y")',
    ],
    [
      's3://Upper/x',
      'SVC_BLOB_URL names an invalid bucket "Upper" (3 to 63 lowercase letters, digits, dots and hyphens)',
    ],
    ['s3://ab/x', 'SVC_BLOB_URL names an invalid bucket "ab" (3 to 63 lowercase letters, digits, dots and hyphens)'],
    [
      's3://a..b/x',
      'SVC_BLOB_URL names an invalid bucket "a..b" (3 to 63 lowercase letters, digits, dots and hyphens)',
    ],
    ['s3://bucket/a/../b', 'SVC_BLOB_URL has an invalid prefix segment ".." (letters, digits, ".", "_" and "-")'],
    ['s3://bucket/a b', 'SVC_BLOB_URL has an invalid prefix segment "a b" (letters, digits, ".", "_" and "-")'],
  ])('SVC_BLOB_URL=%s is refused', (value, message) => {
    expect(problem({ SVC_BLOB_URL: value })).toBe(`Invalid configuration: ${message}`);
  });

  it('the other settings: checked, with messages that never carry a secret', () => {
    const s3 = { SVC_BLOB_URL: 's3://bucket/p' };
    expect(problem({ ...s3, AWS_ENDPOINT_URL_S3: 'minio:9000' })).toBe(
      'Invalid configuration: AWS_ENDPOINT_URL_S3 must use http: or https:',
    );
    expect(problem({ ...s3, AWS_REGION: 'EU West' })).toBe(
      'Invalid configuration: AWS_REGION must be a region name such as eu-west-1 (got "EU West")',
    );
    expect(problem({ ...s3, AWS_SECRET_ACCESS_KEY: 'Very-Secret-1' })).toBe(
      'Invalid configuration: AWS_ACCESS_KEY_ID must be set together with AWS_SECRET_ACCESS_KEY',
    );
    expect(problem({ ...s3, AWS_ACCESS_KEY_ID: 'AKIA' })).toBe(
      'Invalid configuration: AWS_SECRET_ACCESS_KEY must be set together with AWS_ACCESS_KEY_ID',
    );
    expect(problem({ ...s3, SVC_S3_FORCE_PATH_STYLE: 'maybe' })).toBe(
      'Invalid configuration: SVC_S3_FORCE_PATH_STYLE must be true or false (got "maybe")',
    );
    expect(blobStoreConfig({ ...s3, SVC_S3_FORCE_PATH_STYLE: 'no' })).toMatchObject({ forcePathStyle: false });
    expect(problem({ SVC_S3_FORCE_PATH_STYLE: 'true' })).toBe(
      'Invalid configuration: SVC_S3_FORCE_PATH_STYLE is set but SVC_BLOB_URL is not',
    );
  });

  it('the store timeouts: milliseconds, checked, and only with a bucket', () => {
    const s3 = { SVC_BLOB_URL: 's3://bucket/p' };
    expect(
      blobStoreConfig({ ...s3, SVC_S3_CONNECT_TIMEOUT_MS: '1500', SVC_S3_REQUEST_TIMEOUT_MS: '20000' }),
    ).toMatchObject({ connectTimeoutMs: 1500, requestTimeoutMs: 20_000 });
    expect(problem({ ...s3, SVC_S3_REQUEST_TIMEOUT_MS: '0' })).toBe(
      'Invalid configuration: SVC_S3_REQUEST_TIMEOUT_MS must be between 100 and 600000 (got 0)',
    );
    expect(problem({ ...s3, SVC_S3_CONNECT_TIMEOUT_MS: '5s' })).toBe(
      'Invalid configuration: SVC_S3_CONNECT_TIMEOUT_MS must be a whole number between 100 and 120000 (got "5s")',
    );
    expect(problem({ SVC_S3_REQUEST_TIMEOUT_MS: '1000' })).toBe(
      'Invalid configuration: SVC_S3_REQUEST_TIMEOUT_MS is set but SVC_BLOB_URL is not',
    );
  });
});
