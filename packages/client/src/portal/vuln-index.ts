import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { VULN_INDEX_FORMAT, type VulnIndex } from '@svc/protocol';
import { replaceFileSync } from '@svc/protocol/node';
import type { Transport } from '../http/request.ts';
import { createPortalClient, type PortalClient, type VulnIndexAnswer } from './client.ts';
import { parseVulnIndexBytes, VULN_INDEX_RAW_MEMBERS } from '../scanner/versions/read-vuln-index.ts';
import { PortalError } from './errors.ts';
import { endpoint, type PortalTarget } from './target.ts';

export interface LoadVulnIndexOptions {
  /** The home the cache lives under (`<home>/.svc/vuln-index/`); the user's home by default. */
  home?: string;
  /** Once per call at most: the portal could not give a usable index and the cached copy (or none) is used. */
  warn?: (message: string) => void;
  /** The portal has no index (no feeds imported). */
  info?: (message: string) => void;
  /** Another transport (a proxy, a test); node:http(s) by default. */
  transport?: Transport;
}

/** One cache file per portal: its vulnerability index as gzip-compressed JSON; the index's `version` is its ETag. */
export function vulnIndexCacheFile(home: string, target: PortalTarget): string {
  const url = endpoint(target, 'vuln-index');
  const id = createHash('sha256').update(url).digest('hex').slice(0, 16);
  return path.join(home, '.svc', 'vuln-index', `${id}.json.gz`);
}

/**
 * The index from its JSON bytes, checked as far as a scanner relies on it before matching; a
 * reason when not. Parsed a slice at a time: the bytes, one whole string and the objects would
 * not fit the scanner's memory bound together.
 */
function parseIndex(json: Buffer): VulnIndex | string {
  let value: unknown;
  try {
    value = parseVulnIndexBytes(json, undefined, VULN_INDEX_RAW_MEMBERS);
  } catch {
    return 'not JSON';
  }
  const v = value as Partial<VulnIndex> | null;
  if (typeof v !== 'object' || v === null) return 'not a JSON object';
  if (v.format !== VULN_INDEX_FORMAT) {
    const older = typeof v.format === 'number' && v.format < VULN_INDEX_FORMAT;
    return `format ${JSON.stringify(v.format)}, which this svc does not know (it reads format ${VULN_INDEX_FORMAT}; update ${older ? 'the portal' : 'svc'})`;
  }
  if (typeof v.version !== 'string' || !Array.isArray(v.cves) || typeof v.products !== 'object' || v.products === null)
    return 'not a vulnerability index (version, cves or products missing)';
  return v as VulnIndex;
}

interface Cached {
  index: VulnIndex;
}

function readCache(file: string, warn: (message: string) => void): Cached | null {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return null;
  }
  let parsed: VulnIndex | string;
  try {
    parsed = parseIndex(gunzipSync(bytes));
  } catch {
    parsed = 'not gzip';
  }
  if (typeof parsed === 'string') {
    warn(`${file} is damaged (${parsed}); ignoring it (it is rewritten by the next fetch)`);
    return null;
  }
  return { index: parsed };
}

/** Replaced whole with mode 600 in a 700 directory, not durably: as the license cache is. */
function writeCache(file: string, gzip: Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  replaceFileSync(file, gzip, { durable: false, mode: 0o600 });
}

/** A refusal that is the caller's setup (no key, a bad or revoked key): said as it is, never papered over by the cache. */
const isCallerError = (err: PortalError) =>
  err.kind === 'credentials' ||
  err.kind === 'config' ||
  (err.kind === 'http' && (err.status === 401 || err.status === 403));

/**
 * The portal's vulnerability index (GET /api/vuln-index, docs/vuln-feeds.md), kept in a cache
 * file per portal and fetched again only when it changed (If-None-Match on the cached version).
 * When the portal cannot be reached, fails, or sends an index this svc cannot read, the cached
 * copy is used with one warning (none cached: null, with the warning). When the portal has no
 * index: null, with an info line. A missing or refused key is thrown (PortalError).
 */
export async function loadVulnIndex(target: PortalTarget, opts: LoadVulnIndexOptions = {}): Promise<VulnIndex | null> {
  const warn = opts.warn ?? (() => undefined);
  const file = vulnIndexCacheFile(opts.home ?? os.homedir(), target);
  const cached = readCache(file, warn);
  const client: PortalClient = createPortalClient({ target, ...(opts.transport ? { transport: opts.transport } : {}) });
  const fallback = (reason: string): VulnIndex | null => {
    if (cached === null) {
      warn(`${reason}; no vulnerability index is cached, CVEs are matched from the built-in table only`);
      return null;
    }
    warn(`${reason}; using the cached vulnerability index generated ${cached.index.generated_at}`);
    return cached.index;
  };
  let answer: VulnIndexAnswer;
  try {
    answer = await client.vulnIndex(cached?.index.version);
  } catch (err) {
    if (!(err instanceof PortalError) || isCallerError(err)) throw err;
    return fallback(`vulnerability index not fetched: ${err.message}`);
  }
  if (answer.kind === 'none') {
    opts.info?.(`the portal has no vulnerability index (${answer.message})`);
    return null;
  }
  if (answer.kind === 'not_modified')
    return cached?.index ?? fallback('the portal answered 304 to a request without a version');
  let gzip: Buffer;
  let parsed: VulnIndex | string;
  try {
    gzip = answer.gzipped ? answer.body : gzipSync(answer.body);
    parsed = parseIndex(gunzipSync(gzip));
  } catch {
    return fallback("the portal's vulnerability index is not valid gzip");
  }
  if (typeof parsed === 'string') return fallback(`the portal's vulnerability index was refused: ${parsed}`);
  try {
    writeCache(file, gzip);
  } catch (err) {
    warn(
      `cannot cache the vulnerability index in ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); it is fetched whole next time`,
    );
  }
  return parsed;
}

/**
 * The index a scan or an import matches against: the configured portal's, or none without a
 * portal. Never fails the run: a refused key is one warning here (the upload, when asked,
 * says it again as its own error) and the built-in table still applies.
 */
export async function vulnIndexForRun(
  portal: PortalTarget | undefined,
  opts: LoadVulnIndexOptions,
): Promise<VulnIndex | null> {
  if (portal === undefined) return null;
  try {
    return await loadVulnIndex(portal, opts);
  } catch (err) {
    if (!(err instanceof PortalError)) throw err;
    opts.warn?.(`vulnerability index not fetched: ${err.message}; CVEs are matched from the built-in table only`);
    return null;
  }
}
