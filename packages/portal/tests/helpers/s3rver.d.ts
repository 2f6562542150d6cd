// The S3 protocol peer of the blob store tests ships no types; only what s3-peer.ts uses.
declare module '@20minutes/s3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  export default class S3rver {
    constructor(options: {
      directory: string;
      silent?: boolean;
      vhostBuckets?: boolean;
      allowMismatchedSignatures?: boolean;
      configureBuckets?: { name: string }[];
    });
    configureBuckets(): Promise<void>;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    store: {
      getResourcePath(bucket: string, key: string | undefined, resource: string): string;
      putObject(object: {
        bucket: string;
        key: string;
        content: NodeJS.ReadableStream;
        metadata: Record<string, string>;
      }): Promise<unknown>;
      listObjects(
        bucket: string,
        options: { prefix?: string; startAfter?: string; maxKeys?: number },
      ): Promise<{
        objects: { key: string; size: number; lastModifiedDate: Date; metadata: { etag?: string } }[];
        isTruncated: boolean;
      }>;
    };
  }
}
