import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isLoopback } from '@svc/client/kit';
import { ReleaseError } from './checksums.ts';

/**
 * Where `update` takes releases from: SVC_RELEASE_URL, a base URL or an absolute directory holding
 * the files as dist/release/ lays them out (SHA256SUMS and the archives). https anywhere (Node's
 * certificate checks, NODE_EXTRA_CA_CERTS for a private CA); plain http only to this machine or
 * with SVC_ALLOW_INSECURE_HTTP, as for the portal: whoever answers it chooses the code svcd runs.
 */
export const RELEASE_URL_SETTING = 'SVC_RELEASE_URL';

export type ReleaseSource = { kind: 'http'; base: URL } | { kind: 'dir'; dir: string };

const MAX_REDIRECTS = 5;

function checkUrl(url: URL, allowInsecureHttp: boolean): void {
  if (url.protocol === 'https:') return;
  if (url.protocol !== 'http:') throw new ReleaseError(`${url.href}: only https, http or a directory path`);
  if (!allowInsecureHttp && !isLoopback(url.hostname))
    throw new ReleaseError(
      `${url.origin} uses plain http to ${url.hostname}, which is not this machine: a release fetched over it could be replaced on the way. Use https, or accept the risk with SVC_ALLOW_INSECURE_HTTP=true`,
    );
}

export function releaseSourceOf(raw: string | undefined, allowInsecureHttp: boolean): ReleaseSource {
  const value = raw?.trim() ?? '';
  if (value === '')
    throw new ReleaseError(
      `${RELEASE_URL_SETTING} is not set: name where releases are published (an https URL or a directory holding SHA256SUMS and the svc-client archives)`,
    );
  if (value.startsWith('/')) return { kind: 'dir', dir: value };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ReleaseError(`${RELEASE_URL_SETTING} is neither a URL nor an absolute directory path: ${value}`);
  }
  if (url.username !== '' || url.password !== '')
    throw new ReleaseError(`${RELEASE_URL_SETTING} must not carry a user or password`);
  checkUrl(url, allowInsecureHttp);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  url.search = '';
  url.hash = '';
  return { kind: 'http', base: url };
}

/** Where `name` is read from, for messages. */
export const locationOf = (source: ReleaseSource, name: string): string =>
  source.kind === 'dir' ? path.join(source.dir, name) : new URL(encodeURIComponent(name), source.base).href;

export interface FetchLimits {
  maxBytes: number;
  allowInsecureHttp: boolean;
  /** The command's deadline (timeout) and the portal's cancellation together. */
  signal: AbortSignal;
}

async function get(url: URL, limits: FetchLimits, redirects = 0): Promise<http.IncomingMessage> {
  // https (and tls) are loaded only when a release comes over https.
  const client = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = client.get(url, { signal: limits.signal }, resolve);
    req.on('error', reject);
  });
  const status = res.statusCode ?? 0;
  if (status >= 300 && status < 400 && res.headers.location !== undefined) {
    res.resume();
    if (redirects >= MAX_REDIRECTS) throw new ReleaseError(`${url.href}: more than ${MAX_REDIRECTS} redirects`);
    const next = new URL(res.headers.location, url);
    checkUrl(next, limits.allowInsecureHttp);
    return get(next, limits, redirects + 1);
  }
  if (status !== 200) {
    res.resume();
    throw new ReleaseError(`${url.href} answered HTTP ${status}`);
  }
  return res;
}

async function open(
  source: ReleaseSource,
  name: string,
  limits: FetchLimits,
): Promise<{ stream: Readable; size: number | null }> {
  const where = locationOf(source, name);
  if (source.kind === 'dir') {
    const st = await fs.promises.stat(where).catch(() => null);
    if (st === null || !st.isFile()) throw new ReleaseError(`${where} is not a file`);
    return { stream: fs.createReadStream(where, { signal: limits.signal }), size: st.size };
  }
  const res = await get(new URL(where), limits);
  const length = Number(res.headers['content-length']);
  return { stream: res, size: Number.isFinite(length) && res.headers['content-length'] !== undefined ? length : null };
}

/** Counts and hashes what passes, and stops past `maxBytes`. */
function meter(name: string, maxBytes: number): Transform & { bytes: number; sha256: () => string } {
  const hash = createHash('sha256');
  const t = new Transform({
    transform(chunk: Buffer, _enc, next) {
      t.bytes += chunk.length;
      if (t.bytes > maxBytes) return next(new ReleaseError(`${name} is larger than ${maxBytes} bytes`));
      hash.update(chunk);
      next(null, chunk);
    },
  }) as Transform & { bytes: number; sha256: () => string };
  t.bytes = 0;
  t.sha256 = () => hash.digest('hex');
  return t;
}

/** The command's deadline or a cancellation as the reason, not the abort's generic message; the place with a network error. */
function explained(err: unknown, name: string, signal: AbortSignal): ReleaseError {
  if (signal.aborted) {
    const reason = signal.reason as { name?: string } | undefined;
    return new ReleaseError(
      reason?.name === 'TimeoutError'
        ? `${name}: not fetched before the command's deadline (SVC_CMD_TIMEOUT)`
        : `${name}: fetch stopped: the command was cancelled`,
    );
  }
  if (err instanceof ReleaseError) return err;
  const e = err as NodeJS.ErrnoException;
  return new ReleaseError(`cannot fetch ${name}: ${e.code ?? e.message}`);
}

/** `name` into `file` (created, mode 600); its size and SHA-256. */
export async function download(
  source: ReleaseSource,
  name: string,
  file: string,
  limits: FetchLimits,
): Promise<{ bytes: number; sha256: string }> {
  try {
    const { stream, size } = await open(source, name, limits);
    if (size !== null && size > limits.maxBytes) {
      stream.destroy();
      throw new ReleaseError(`${name} is larger than ${limits.maxBytes} bytes (${size})`);
    }
    const m = meter(name, limits.maxBytes);
    await pipeline(stream, m, fs.createWriteStream(file, { flags: 'wx', mode: 0o600 }), { signal: limits.signal });
    return { bytes: m.bytes, sha256: m.sha256() };
  } catch (err) {
    throw explained(err, locationOf(source, name), limits.signal);
  }
}

/** A small text file of the release (SHA256SUMS). */
export async function fetchText(source: ReleaseSource, name: string, limits: FetchLimits): Promise<string> {
  try {
    const { stream } = await open(source, name, limits);
    const chunks: Buffer[] = [];
    const m = meter(name, limits.maxBytes);
    await pipeline(stream, m, async (s: AsyncIterable<Buffer>) => {
      for await (const c of s) chunks.push(c);
    });
    return Buffer.concat(chunks).toString('utf8');
  } catch (err) {
    throw explained(err, locationOf(source, name), limits.signal);
  }
}
