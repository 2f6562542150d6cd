import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { DomainError } from '../domain/errors.ts';

/** The feeds an operator imports (docs/vuln-feeds.md). */
export const FEEDS = ['nvd', 'kev', 'epss', 'debian'] as const;
export type Feed = (typeof FEEDS)[number];

export const FEED_NAMES: Record<Feed, string> = {
  nvd: 'NVD CVE JSON 2.0 feed',
  kev: 'CISA KEV catalogue (JSON)',
  epss: 'FIRST EPSS scores (CSV)',
  debian: 'Debian security tracker data (JSON)',
};

/**
 * Largest feed accepted, counted after decompression. NVD's largest yearly file is a few
 * hundred MB; a file many times that is not a feed (or a gzip bomb).
 */
export const MAX_FEED_BYTES: Record<Feed, number> = {
  nvd: 2 * 1024 ** 3,
  kev: 64 * 1024 ** 2,
  epss: 256 * 1024 ** 2,
  // The whole tracker is some tens of MB today.
  debian: 1024 ** 3,
};

/** A feed file refused: what it is, which file, what is wrong. */
export const feedRefused = (label: string, message: string): DomainError =>
  new DomainError('invalid.vuln_feed', `${label}: ${message}`);

/**
 * A NUL character (U+0000) anywhere in a feed file: PostgreSQL cannot store one and no
 * publisher writes one, so the whole file is refused rather than a record skipped (a damaged
 * or forged file should not be half imported). `where` says where it is.
 */
export const nulRefused = (label: string, where: string): DomainError =>
  feedRefused(label, `a NUL character (U+0000) ${where}: no feed holds one; the file is refused`);

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * The feed's bytes, decompressed when they start with gzip's magic (files are published both
 * ways), refused once more than `maxBytes` came out: a truncated or damaged gzip and an
 * oversized file are clear errors, never a half import.
 */
export async function* feedBytes(source: Readable, label: string, maxBytes: number): AsyncGenerator<Buffer> {
  const iterator = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let first = await iterator.next();
  while (!first.done && first.value.length < 2) {
    const more = await iterator.next();
    if (more.done) break;
    first = { done: false, value: Buffer.concat([first.value, more.value]) };
  }
  if (first.done) throw feedRefused(label, 'the file is empty');
  const head: Buffer = first.value;
  const gzipped = head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1];
  const rest = (async function* () {
    yield head;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  })();
  let total = 0;
  const counted = (chunk: Buffer): Buffer => {
    total += chunk.length;
    if (total > maxBytes)
      throw new DomainError(
        'too_large.vuln_feed',
        `${label}: larger than ${Math.round(maxBytes / 1024 ** 2)} MB${gzipped ? ' once decompressed' : ''}; this is not a feed file`,
      );
    return chunk;
  };
  if (!gzipped) {
    try {
      for await (const chunk of rest) yield counted(chunk);
    } finally {
      source.destroy();
    }
    return;
  }
  const gunzip = createGunzip();
  // A failure on either side ends the other; the consumer sees it on the gunzip side.
  pipeline(Readable.from(rest), gunzip).catch(() => undefined);
  try {
    for await (const chunk of gunzip) yield counted(chunk as Buffer);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw feedRefused(label, `not a valid gzip file (${(err as Error).message})`);
  } finally {
    gunzip.destroy();
    source.destroy();
  }
}
