import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { uploadTooLargeMessage } from '@svc/protocol';
import { badRequest, HttpError } from './errors.ts';
import { clientError } from './multipart-body.ts';

/** 413 naming the limit (SVC_UPLOAD_MAX_MB) and its bytes, so a client can tell which limit it met. */
export const tooLargeFor = (limitBytes: number) => () =>
  new HttpError(413, uploadTooLargeMessage(limitBytes), { extra: { limit_bytes: limitBytes } });
export const clientAborted = () => badRequest('The upload was interrupted before the end of the request');

/**
 * Watches an upload's raw body while its parts are read: counts every byte, framing included,
 * against the limit, and notices a client that goes away mid-body (the socket closes before the
 * request is complete). Such a client is neither a storage nor a database problem: the wait
 * for more parts is cut (`aborted`) and the reading file stream destroyed.
 */
export class UploadBodyWatch {
  received = 0;
  clientGone = false;
  /** Rejects once the client has gone; race it against every wait for the client. */
  readonly aborted: Promise<never>;
  private reading: MultipartFile['file'] | null = null;
  private readonly count = (chunk: Buffer) => {
    this.received += chunk.length;
  };
  private readonly onClose: () => void;
  private readonly tooLarge: () => HttpError;
  private readonly request: FastifyRequest;
  private readonly limitBytes: number;

  constructor(request: FastifyRequest, limitBytes: number) {
    this.request = request;
    this.limitBytes = limitBytes;
    this.tooLarge = tooLargeFor(limitBytes);
    request.raw.on('data', this.count);
    let reject: (err: Error) => void = () => {};
    this.aborted = new Promise<never>((_, no) => {
      reject = no;
    });
    this.aborted.catch(() => undefined);
    this.onClose = () => {
      if (request.raw.complete) return;
      this.clientGone = true;
      const err = clientAborted();
      this.reading?.destroy(err);
      reject(err);
    };
    request.raw.once('close', this.onClose);
  }

  over(): boolean {
    return this.received > this.limitBytes;
  }

  /** Throws the 413 once the body has passed the limit. */
  checkLimit(): void {
    if (this.over()) throw this.tooLarge();
  }

  /** A part's file stream, cut by the limit, with its errors told as the client's. */
  async *guarded(file: MultipartFile['file']): AsyncGenerator<Buffer> {
    this.reading = file;
    try {
      for await (const chunk of file as AsyncIterable<Buffer>) {
        this.checkLimit();
        yield chunk;
      }
    } catch (err) {
      throw this.over() ? this.tooLarge() : this.clientGone ? clientAborted() : clientError(err);
    } finally {
      this.reading = null;
    }
  }

  stop(): void {
    this.request.raw.off('data', this.count);
    this.request.raw.off('close', this.onClose);
  }
}
