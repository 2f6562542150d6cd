import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

/**
 * Every request the client makes is first described as a RequestSpec, then either sent or
 * rendered as an equivalent curl command (`api_debug.sh --show-curl`): the two can never
 * drift apart because they read the same description.
 */
export interface FilePart {
  name: string;
  file: string;
  contentType: string;
}

export type RequestBody =
  | { kind: 'json'; text: string }
  | { kind: 'file'; file: string; contentType: string }
  | { kind: 'multipart'; parts: FilePart[] };

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: RequestBody;
}

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Milliseconds from sending to the last byte. */
  ms: number;
}

export class HttpError extends Error {
  readonly kind: 'timeout' | 'network' | 'file';
  /** Why, without the address: a system error code (ECONNREFUSED) or a short phrase. */
  readonly reason: string;
  constructor(kind: 'timeout' | 'network' | 'file', message: string, reason = message) {
    super(message);
    this.name = 'HttpError';
    this.kind = kind;
    this.reason = reason;
  }
}

/** Headers whose values are credentials: never printed in full. */
const SECRET_HEADERS = new Set(['x-api-key', 'x-identity-token', 'authorization', 'cookie']);

export function textOf(res: HttpResponse): string {
  return res.body.toString('utf8');
}

/** The parsed JSON body, or undefined when the body is not JSON. */
export function jsonOf(res: HttpResponse): unknown {
  try {
    return JSON.parse(textOf(res));
  } catch {
    return undefined;
  }
}

/** What the body sends: its bytes in order (a buffer, or a file streamed as it is) and its length. */
interface Body {
  pieces: (Buffer | { file: string })[];
  length: number;
  contentType?: string;
}

async function fileSize(file: string): Promise<number> {
  try {
    const st = await fs.promises.stat(file);
    if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { path: file, code: 'EISDIR' });
    return st.size;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new HttpError('file', `Cannot read ${e.path ?? file}: ${e.code ?? e.message}`);
  }
}

/** A form-data field or file name as a quoted-string: quotes and line breaks percent-encoded. */
function formName(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** The body's bytes, with files checked before anything is sent so a missing file is a `file` error. */
async function bodyOf(body: RequestBody | undefined): Promise<Body | undefined> {
  if (body === undefined) return undefined;
  if (body.kind === 'json') {
    const bytes = Buffer.from(body.text, 'utf8');
    return { pieces: [bytes], length: bytes.length, contentType: 'application/json' };
  }
  if (body.kind === 'file')
    return { pieces: [{ file: body.file }], length: await fileSize(body.file), contentType: body.contentType };
  // multipart/form-data (RFC 7578); crypto is loaded only here, the daemon's idle heartbeats never need it.
  const { randomBytes } = await import('node:crypto');
  const boundary = `----svc${randomBytes(16).toString('hex')}`;
  const pieces: Body['pieces'] = [];
  let length = 0;
  const text = (t: string) => {
    const b = Buffer.from(t, 'utf8');
    pieces.push(b);
    length += b.length;
  };
  for (const part of body.parts) {
    const size = await fileSize(part.file);
    text(
      `--${boundary}\r\ncontent-disposition: form-data; name="${formName(part.name)}"; filename="${formName(path.basename(part.file))}"\r\ncontent-type: ${part.contentType}\r\n\r\n`,
    );
    pieces.push({ file: part.file });
    length += size;
    text('\r\n');
  }
  text(`--${boundary}--\r\n`);
  return { pieces, length, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The bytes a request body would send (its Content-Length), without sending anything. */
export async function bodyLength(body: RequestBody | undefined): Promise<number> {
  return (await bodyOf(body))?.length ?? 0;
}

async function writeBody(req: http.ClientRequest, body: Body): Promise<void> {
  for (const piece of body.pieces) {
    if (Buffer.isBuffer(piece)) {
      if (!req.write(piece)) await once(req, 'drain');
      continue;
    }
    for await (const chunk of fs.createReadStream(piece.file)) if (!req.write(chunk)) await once(req, 'drain');
  }
  req.end();
}

/** Sends one request: a RequestSpec in, the whole answer out. Another transport can stand in (a proxy, a test). */
export type Transport = (spec: RequestSpec, timeoutMs: number) => Promise<HttpResponse>;

/**
 * node:http(s) rather than fetch: fetch loads undici (about 15 MB of resident memory), too much
 * for an agent daemon that heartbeats every few minutes for months. Redirects are not followed;
 * `timeoutMs` bounds everything from connecting to the answer's last byte.
 */
export const send: Transport = async (spec, timeoutMs) => {
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    throw new HttpError('network', `Cannot reach ${spec.url}: invalid URL`, 'invalid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new HttpError(
      'network',
      `Cannot reach ${url.origin}: unsupported protocol ${url.protocol}`,
      'unsupported protocol',
    );
  const body = await bodyOf(spec.body);
  const headers: Record<string, string | number> = { ...spec.headers };
  const named = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
  if (body?.contentType !== undefined && !named.has('content-type')) headers['content-type'] = body.contentType;
  if (body !== undefined) headers['content-length'] = body.length;
  // https (and with it tls) is loaded only for an https portal.
  const transport = url.protocol === 'https:' ? await import('node:https') : http;
  const started = performance.now();
  return new Promise<HttpResponse>((resolve, reject) => {
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const fail = (err: unknown) => {
      clearTimeout(timer);
      if (timedOut)
        reject(new HttpError('timeout', `No answer from ${url.origin} within ${timeoutMs / 1000} s`, 'timeout'));
      else {
        const e = err as NodeJS.ErrnoException;
        const reason = e.code ?? e.message;
        reject(new HttpError('network', `Cannot reach ${url.origin}: ${reason}`, reason));
      }
    };
    let req: http.ClientRequest;
    try {
      req = transport.request(url, { method: spec.method, headers });
    } catch (err) {
      fail(err);
      return;
    }
    timer = setTimeout(() => {
      timedOut = true;
      req.destroy();
    }, timeoutMs);
    req.on('error', fail);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          ms: Math.round(performance.now() - started),
        });
      });
    });
    if (body === undefined) req.end();
    else writeBody(req, body).catch((err: unknown) => req.destroy(err as Error));
  });
};

/** A credential as it may be shown: the `svc_<tier>_` prefix of a license key, nothing of anything else. */
export function maskSecret(value: string): string {
  const m = /^svc_[a-z]{3}_/.exec(value);
  return m ? `${m[0]}****` : '****';
}

/** POSIX shell single quoting. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_\-./:=@%+,]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The curl command that sends the same request. Credentials are masked unless
 * `revealSecrets` is set (never done by the tools: the output is meant for pasting into
 * tickets and chats).
 */
export function toCurl(
  spec: RequestSpec,
  opts: { timeoutS: number; output?: string | undefined; revealSecrets?: boolean },
): string {
  const args = ['curl', '-sS', '--max-time', String(opts.timeoutS)];
  if (spec.method !== 'GET' || spec.body !== undefined) args.push('-X', spec.method);
  for (const [name, value] of Object.entries(spec.headers)) {
    const shown = SECRET_HEADERS.has(name.toLowerCase()) && !opts.revealSecrets ? maskSecret(value) : value;
    args.push('-H', `${name}: ${shown}`);
  }
  const body = spec.body;
  if (body?.kind === 'json') {
    if (!Object.keys(spec.headers).some((h) => h.toLowerCase() === 'content-type'))
      args.push('-H', 'content-type: application/json');
    args.push('--data-raw', body.text);
  } else if (body?.kind === 'file') {
    if (!Object.keys(spec.headers).some((h) => h.toLowerCase() === 'content-type'))
      args.push('-H', `content-type: ${body.contentType}`);
    args.push('--data-binary', `@${body.file}`);
  } else if (body?.kind === 'multipart') {
    for (const part of body.parts) args.push('-F', `${part.name}=@${part.file};type=${part.contentType}`);
  }
  if (opts.output !== undefined) args.push('-o', opts.output);
  args.push(spec.url);
  return args.map(shellQuote).join(' ');
}
