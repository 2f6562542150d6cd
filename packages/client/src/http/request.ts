import fs from 'node:fs';
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
  headers: Headers;
  body: Buffer;
  /** Milliseconds from sending to the last byte. */
  ms: number;
}

export class HttpError extends Error {
  readonly kind: 'timeout' | 'network' | 'file';
  constructor(kind: 'timeout' | 'network' | 'file', message: string) {
    super(message);
    this.name = 'HttpError';
    this.kind = kind;
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

async function bodyOf(body: RequestBody | undefined): Promise<string | Buffer | FormData | undefined> {
  if (body === undefined) return undefined;
  try {
    if (body.kind === 'json') return body.text;
    if (body.kind === 'file') return await fs.promises.readFile(body.file);
    const form = new FormData();
    for (const part of body.parts)
      form.append(part.name, await fs.openAsBlob(part.file, { type: part.contentType }), path.basename(part.file));
    return form;
  } catch (err) {
    throw new HttpError(
      'file',
      `Cannot read ${(err as NodeJS.ErrnoException).path ?? 'request body file'}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

/** The fetch a request goes through: the global one unless a caller brings its own. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export async function send(spec: RequestSpec, timeoutMs: number, fetchImpl: FetchLike = fetch): Promise<HttpResponse> {
  const headers = new Headers(spec.headers);
  if (spec.body?.kind === 'json' && !headers.has('content-type')) headers.set('content-type', 'application/json');
  if (spec.body?.kind === 'file' && !headers.has('content-type')) headers.set('content-type', spec.body.contentType);
  const init: RequestInit = {
    method: spec.method,
    headers,
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
  };
  const body = await bodyOf(spec.body);
  if (body !== undefined) init.body = body;
  const started = performance.now();
  try {
    const res = await fetchImpl(spec.url, init);
    const bytes = Buffer.from(await res.arrayBuffer());
    return { status: res.status, headers: res.headers, body: bytes, ms: Math.round(performance.now() - started) };
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string; message?: string }; message: string };
    if (e.name === 'TimeoutError')
      throw new HttpError('timeout', `No answer from ${origin(spec.url)} within ${timeoutMs / 1000} s`);
    const cause = e.cause?.code ?? e.cause?.message ?? e.message;
    throw new HttpError('network', `Cannot reach ${origin(spec.url)}: ${cause}`);
  }
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

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
  opts: { timeoutS: number; output?: string; revealSecrets?: boolean },
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
