import fs from 'node:fs';

/**
 * Reads a vulnerability index file without holding its whole text: JSON.parse of the file at once
 * needs the bytes, the string and the objects together (some 3.5 times the file at its peak, a
 * 100 MB index over 400 MB). Here the file is read in chunks and each member of the top-level
 * object's arrays and objects (one CVE, one product's ranges) is parsed on its own, in batches,
 * so the peak is the objects plus a chunk. Any JSON file whose top level is an object is read
 * the same as JSON.parse reads it; what the index must contain is its loader's to check.
 */

const CHUNK = 1 << 20;
/** Members parsed in one JSON.parse call: fewer calls; under V8's large-object size (128 KiB), so each batch dies young. */
const BATCH_BYTES = 48 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

export class VulnIndexFileError extends Error {
  override name = 'VulnIndexFileError';
}

/**
 * Top-level keys of the index whose object's members are kept as their JSON text, parsed only
 * when used: the Debian tracker's packages (many small objects, of which a scan needs a handful)
 * cost about a tenth of the reading otherwise. See `debianPackage` in debian.ts.
 */
export const VULN_INDEX_RAW_MEMBERS = ['debian'] as const;

/**
 * The file's top-level object; `chunkBytes` is the read size (small in tests, to cut members
 * across reads); the members of the objects under `raw` keys stay JSON text.
 */
export function readVulnIndexFile(file: string, chunkBytes = CHUNK, raw: readonly string[] = []): unknown {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(chunkBytes);
    return parseChunks(function* () {
      for (let n = fs.readSync(fd, buf, 0, chunkBytes, null); n > 0; n = fs.readSync(fd, buf, 0, chunkBytes, null))
        yield buf.subarray(0, n);
    }, raw);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The same from JSON bytes already in memory (a decompressed cache file): parsed a slice at a
 * time, so the whole text is never made into one string beside the bytes.
 */
export function parseVulnIndexBytes(bytes: Buffer, chunkBytes = CHUNK, raw: readonly string[] = []): unknown {
  return parseChunks(function* () {
    for (let at = 0; at < bytes.length; at += chunkBytes) yield bytes.subarray(at, at + chunkBytes);
  }, raw);
}

/** The key and the value's text of an object member's text (`"name": {…}`). */
function splitMember(t: string): [string, string] {
  let i = 1;
  while (i < t.length && t[i] !== '"') i += t[i] === '\\' ? 2 : 1;
  const colon = t.indexOf(':', i + 1);
  if (t[0] !== '"' || colon === -1) throw new SyntaxError('an object member without a key');
  return [JSON.parse(t.slice(0, i + 1)) as string, t.slice(colon + 1).trim()];
}

/** Each chunk is read before the next is asked for, so a reader may reuse its buffer. */
function parseChunks(chunks: () => Iterable<Buffer>, raw: readonly string[]): unknown {
  const result: Record<string, unknown> = {};
  // Bytes of the member being read that earlier reads left (most members lie within one read).
  let carried: Buffer[] = [];
  let batch: string[] = [];
  let batchBytes = 0;
  let key: string | null = null;
  let container: 'array' | 'object' | null = null;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let started = false;
  let ended = false;
  let pending = false;

  const flush = () => {
    if (batch.length === 0 || key === null) return;
    const target = result[key];
    if (container === 'array')
      for (const v of JSON.parse(`[${batch.join(',')}]`) as unknown[]) (target as unknown[]).push(v);
    else Object.assign(target as object, JSON.parse(`{${batch.join(',')}}`));
    batch = [];
    batchBytes = 0;
  };
  let members = 0;
  /** One member read; an empty one only closes an empty container (`[]`, `{}`). */
  const endMember = (t: string, closing: boolean) => {
    if (t === '') {
      if (closing && members === 0) return;
      throw new SyntaxError(`an empty member in ${key}`);
    }
    members++;
    if (rawHere()) {
      const [name, value] = splitMember(t);
      // Defined, not assigned: a member named __proto__ stays a member, as JSON.parse keeps it.
      Object.defineProperty(result[key as string], name, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      return;
    }
    batch.push(t);
    batchBytes += t.length;
    if (batchBytes >= BATCH_BYTES) flush();
  };
  const rawHere = () => container === 'object' && key !== null && raw.includes(key);

  let buf: Buffer = Buffer.alloc(0);
  let from = 0;
  // Members wholly inside this read are not cut out one by one: the run of them (with the commas
  // between) becomes one string, parsed with the batch. -1: no run open.
  let runStart = -1;
  let runEnd = -1;
  const endRun = () => {
    if (runStart === -1) return;
    const text = buf.toString('utf8', runStart, runEnd);
    runStart = -1;
    // Only the inside of an empty container (`[ ]`) is blank; anything else JSON.parse judges.
    if (text.length > 8 || text.trim() !== '') {
      batch.push(text);
      batchBytes += text.length;
      if (batchBytes >= BATCH_BYTES) flush();
    }
  };
  /** A member of the streamed container ends at `i` (a comma, or the container's end when `closing`). */
  const memberEnds = (i: number, closing: boolean) => {
    if (carried.length > 0 || rawHere()) {
      endRun();
      endMember(take(i), closing);
      return;
    }
    if (runStart === -1) runStart = from;
    runEnd = i;
    members++;
    if (runEnd - runStart >= BATCH_BYTES) endRun();
  };
  /** The text from `from` to `to` of this read, after what earlier reads carried. */
  const take = (to: number): string => {
    const t =
      carried.length === 0
        ? buf.toString('utf8', from, to)
        : Buffer.concat([...carried, buf.subarray(from, to)]).toString('utf8');
    carried = [];
    return t.trim();
  };
  for (const chunk of chunks()) {
    buf = chunk;
    const n = buf.length;
    from = 0;
    let backslash = buf.indexOf(BACKSLASH);
    for (let i = 0; i < n; i++) {
      if (inString) {
        // Inside a string only its closing quote matters: found natively, past escaped ones.
        if (escaped) {
          escaped = false;
          continue;
        }
        let q = buf.indexOf(QUOTE, i);
        if (q === -1) q = n;
        // The next backslash is looked for again only once passed: most text has none.
        if (backslash !== -1 && backslash < i) backslash = buf.indexOf(BACKSLASH, i);
        if (backslash !== -1 && backslash < q) {
          i = backslash;
          escaped = true;
          continue;
        }
        if (q === n) {
          i = n;
          continue;
        }
        i = q;
        inString = false;
        continue;
      }
      const c = buf[i] as number;
      if (pending && c > 0x20) {
        // The first character of a top-level member's value: a container is streamed, a scalar kept whole.
        pending = false;
        if (c === OPEN_BRACKET || c === OPEN_BRACE) {
          container = c === OPEN_BRACKET ? 'array' : 'object';
          result[key as string] = container === 'array' ? [] : {};
          depth = 2;
          members = 0;
          from = i + 1;
          continue;
        }
      }
      if (c === QUOTE) {
        inString = true;
        continue;
      }
      if (ended) {
        if (c > 0x20) throw new VulnIndexFileError('unexpected text after the top-level object');
        continue;
      }
      if (!started) {
        if (c === OPEN_BRACE) {
          started = true;
          depth = 1;
          from = i + 1;
        } else if (c > 0x20) throw new VulnIndexFileError('the file is not a JSON object');
        continue;
      }
      if (depth === 1 && c === COLON && key === null) {
        key = JSON.parse(take(i)) as string;
        from = i + 1;
        pending = true;
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === 1 && container !== null) {
          memberEnds(i, true);
          endRun();
          flush();
          container = null;
          key = null;
          from = i + 1;
        } else if (depth === 0) {
          const scalar = take(i);
          if (key !== null && scalar !== '') result[key] = JSON.parse(scalar);
          ended = true;
        }
      } else if (c === COMMA) {
        if (depth === 2 && container !== null) {
          memberEnds(i, false);
          from = i + 1;
        } else if (depth === 1) {
          const scalar = take(i);
          if (key !== null && scalar !== '') result[key] = JSON.parse(scalar);
          key = null;
          from = i + 1;
        }
      }
    }
    // A run never spans two reads: the reader may reuse its buffer.
    endRun();
    if (!ended && started && from < n) carried.push(Buffer.from(buf.subarray(from, n)));
  }
  if (!ended) throw new VulnIndexFileError('the file ends inside the top-level object');
  return result;
}
