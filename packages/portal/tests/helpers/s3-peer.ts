import fs from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import S3rver from '@20minutes/s3rver';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { S3Settings } from '../../src/config/blob-store.ts';

/**
 * A real S3 protocol peer for the blob store tests: s3rver (path-style, its fixed test
 * credentials) on 127.0.0.1 port 0, in this process, plus the two multipart calls it lacks
 * (AbortMultipartUpload and ListMultipartUploads), so an aborted or unfinished upload can be
 * seen through the protocol, and ListObjectsV2 over its own store: s3rver's continuation
 * tokens are DES-encrypted, which Node 24's OpenSSL 3 no longer offers, so its listing failed
 * (500) on every bucket of more than one page. `stop()` plays an outage: the server closes and
 * a listener holding the same port (SO_REUSEPORT, so no other process can take it) resets
 * every connection; `start()` serves on that port again.
 */
export interface S3Peer {
  port: number;
  endpoint: string;
  bucket: string;
  /** The portal's settings for this peer (SVC_BLOB_URL=s3://<bucket>/<prefix>). */
  settings(prefix?: string): S3Settings;
  /** The same as environment variables, for a portal started from its configuration. */
  env(prefix?: string): Record<string, string>;
  /** Answer requests before s3rver does: return true when `refuse` handled it. */
  refuse: ((req: IncomingMessage, res: ServerResponse) => boolean) | null;
  /** Every request line seen, e.g. `PUT /bucket/key?partNumber=2&uploadId=…`. */
  requests: string[];
  /** A plain SDK client on the peer (the caller destroys it), to look at the bucket without the store. */
  client(): S3Client;
  /** Keys of the objects under `prefix`, listed through the protocol (every page), sorted. */
  objects(prefix: string): Promise<string[]>;
  /** Write a one-byte object under each key straight into the peer's store (fast, for buckets of many objects). */
  seed(keys: string[]): Promise<void>;
  /** Multipart uploads begun and neither completed nor aborted (the peer's own view). */
  unfinishedUploads(): Promise<string[]>;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const S3_ACCESS_KEY = 'S3RVER';
const S3_SECRET_KEY = 'S3RVER';

const XMLNS = 'http://s3.amazonaws.com/doc/2006-03-01/';
const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startS3Peer(bucket = 'svc-test'): Promise<S3Peer> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-s3rver-'));
  // Signatures are not compared: s3rver signs a bucket's own URL without the trailing slash
  // the SDK sends (`/bucket/?list-type=2`). The access key must still be its own.
  const s3rver = new S3rver({
    directory,
    silent: true,
    vhostBuckets: false,
    allowMismatchedSignatures: true,
    configureBuckets: [{ name: bucket }],
  });
  await s3rver.configureBuckets();
  const uploadsDir = s3rver.store.getResourcePath(bucket, undefined, 'uploads');
  const handle = s3rver.callback();

  const listUploads = async (prefix: string) => {
    const ids = await fs.readdir(uploadsDir).catch(() => [] as string[]);
    const out: { key: string; id: string; initiated: Date }[] = [];
    for (const id of ids) {
      const key = await fs.readFile(path.join(uploadsDir, id, 'key'), 'utf8').catch(() => null);
      const stat = await fs.stat(path.join(uploadsDir, id, 'key')).catch(() => null);
      if (key !== null && stat !== null && key.startsWith(prefix)) out.push({ key, id, initiated: stat.mtime });
    }
    return out;
  };

  // ListObjectsV2, pages of at most 1,000 like S3; the continuation token is the last key sent, in base64url.
  const listObjectsV2 = async (query: URLSearchParams) => {
    const prefix = query.get('prefix') ?? '';
    const token = query.get('continuation-token');
    const startAfter = token === null ? (query.get('start-after') ?? '') : Buffer.from(token, 'base64url').toString();
    const maxKeys = Math.min(1000, Number(query.get('max-keys') ?? 1000));
    const page = await s3rver.store.listObjects(bucket, { prefix, startAfter, maxKeys });
    const last = page.objects.at(-1)?.key;
    const items = page.objects
      .map(
        (o) =>
          `<Contents><Key>${escapeXml(o.key)}</Key><LastModified>${o.lastModifiedDate.toISOString()}</LastModified><ETag>${escapeXml(o.metadata.etag ?? '')}</ETag><Size>${o.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
      )
      .join('');
    const next =
      page.isTruncated && last !== undefined
        ? `<NextContinuationToken>${Buffer.from(last).toString('base64url')}</NextContinuationToken>`
        : '';
    return `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="${XMLNS}"><Name>${bucket}</Name><Prefix>${escapeXml(prefix)}</Prefix><KeyCount>${page.objects.length}</KeyCount><MaxKeys>${maxKeys}</MaxKeys><IsTruncated>${page.isTruncated}</IsTruncated>${next}${items}</ListBucketResult>`;
  };

  const peer: S3Peer = {
    port: 0,
    endpoint: '',
    bucket,
    refuse: null,
    requests: [],
    settings: (prefix = '') => ({
      kind: 's3',
      bucket,
      prefix,
      endpoint: peer.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
      connectTimeoutMs: 5000,
      requestTimeoutMs: 5000,
    }),
    env: (prefix = '') => ({
      SVC_BLOB_URL: `s3://${bucket}/${prefix}`,
      AWS_ENDPOINT_URL_S3: peer.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: S3_ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: S3_SECRET_KEY,
      SVC_S3_FORCE_PATH_STYLE: 'true',
    }),
    client: () =>
      new S3Client({
        region: 'us-east-1',
        endpoint: peer.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
      }),
    objects: async (prefix) => {
      const client = peer.client();
      const keys: string[] = [];
      try {
        let token: string | undefined;
        do {
          const out = await client.send(
            new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
          );
          keys.push(...(out.Contents ?? []).map((o) => o.Key ?? ''));
          token = out.IsTruncated ? out.NextContinuationToken : undefined;
        } while (token !== undefined);
        return keys.sort();
      } finally {
        client.destroy();
      }
    },
    seed: async (keys) => {
      for (let i = 0; i < keys.length; i += 100)
        await Promise.all(
          keys
            .slice(i, i + 100)
            .map((key) =>
              s3rver.store.putObject({ bucket, key, content: Readable.from([Buffer.from('x')]), metadata: {} }),
            ),
        );
    },
    unfinishedUploads: async () => (await listUploads('')).map((u) => u.key).sort(),
    stop: async () => {},
    start: async () => {},
    close: async () => {},
  };

  const serve = (req: IncomingMessage, res: ServerResponse) => {
    peer.requests.push(`${req.method} ${req.url}`);
    if (peer.refuse?.(req, res)) return;
    const url = new URL(req.url ?? '/', 'http://peer');
    const uploadId = url.searchParams.get('uploadId');
    if (req.method === 'DELETE' && uploadId !== null) {
      // AbortMultipartUpload: the parts go, the object never appears.
      if (!/^[0-9a-f]+$/.test(uploadId)) return void res.writeHead(400).end();
      req.resume();
      fs.rm(path.join(uploadsDir, uploadId), { recursive: true, force: true }).then(
        () => res.writeHead(204).end(),
        () => res.writeHead(500).end(),
      );
      return;
    }
    if (
      req.method === 'GET' &&
      url.pathname.replace(/\/$/, '') === `/${bucket}` &&
      url.searchParams.get('list-type') === '2'
    ) {
      listObjectsV2(url.searchParams).then(
        (xml) => res.writeHead(200, { 'content-type': 'application/xml' }).end(xml),
        () => res.writeHead(500).end(),
      );
      return;
    }
    if (req.method === 'GET' && url.pathname.replace(/\/$/, '') === `/${bucket}` && url.searchParams.has('uploads')) {
      // ListMultipartUploads, one page.
      listUploads(url.searchParams.get('prefix') ?? '').then((uploads) => {
        const items = uploads
          .map(
            (u) =>
              `<Upload><Key>${escapeXml(u.key)}</Key><UploadId>${u.id}</UploadId><Initiated>${u.initiated.toISOString()}</Initiated></Upload>`,
          )
          .join('');
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult xmlns="${XMLNS}"><Bucket>${bucket}</Bucket><IsTruncated>false</IsTruncated>${items}</ListMultipartUploadsResult>`,
        );
      });
      return;
    }
    handle(req, res);
  };

  const listen = (port: number) =>
    new Promise<http.Server>((resolve, reject) => {
      const server = http.createServer(serve);
      server.on('error', reject);
      server.listen({ port, host: '127.0.0.1', reusePort: true }, () => resolve(server));
    });
  const holdWithResets = (port: number) =>
    new Promise<net.Server>((resolve, reject) => {
      const holder = net.createServer((s) => s.resetAndDestroy());
      holder.on('error', reject);
      holder.listen({ port, host: '127.0.0.1', reusePort: true }, () => resolve(holder));
    });
  const closeServer = (server: http.Server) =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  const closeHolder = (holder: net.Server) => new Promise<void>((resolve) => holder.close(() => resolve()));

  let server: http.Server | null = await listen(0);
  let holder: net.Server | null = null;
  peer.port = (server.address() as net.AddressInfo).port;
  peer.endpoint = `http://127.0.0.1:${peer.port}`;
  peer.stop = async () => {
    if (server === null) return;
    holder = await holdWithResets(peer.port);
    await closeServer(server);
    server = null;
  };
  peer.start = async () => {
    if (server !== null) return;
    server = await listen(peer.port);
    if (holder !== null) await closeHolder(holder);
    holder = null;
  };
  peer.close = async () => {
    if (server !== null) await closeServer(server);
    if (holder !== null) await closeHolder(holder);
    server = null;
    holder = null;
    await fs.rm(directory, { recursive: true, force: true });
  };
  return peer;
}
