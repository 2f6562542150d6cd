import { MAX_OUTPUT_BYTES } from '@svc/protocol';
import { stripEscapes } from '@svc/client/kit';

/**
 * What a command's stdout and stderr look like in its report (ANSI escapes stripped,
 * 10 KB each). The portal caps again on receipt; capping here keeps the journal and the
 * request small and makes the report the same whichever side cuts.
 */

/** Escape sequences and NUL (the portal's database cannot store it) removed; packages/client/src/kit/text/printable.ts. */
export const stripAnsi = stripEscapes;

/**
 * An absolute path: a `/` that does not follow a letter, digit, `/` or `:` (so not a URL, a
 * CIDR block or `T:22/tcp`), then one or more segments.
 */
const ABSOLUTE_PATH = /(?<![\w/:.~-])\/[^\s"'`/,;()[\]{}<>]+(?:\/[^\s"'`/,;()[\]{}<>]+)*\/?/g;

/**
 * A report as the tenant's users may read it: the host's paths go, what they name stays.
 * A path under the sessions root becomes relative to it (the session id and file name); any
 * other absolute path (the install, nmap, a temp file, a config) its file name. The scan's
 * options, targets, counts and URLs are left as they are.
 */
export function withoutHostPaths(text: string, sessionsRoot: string): string {
  const root = sessionsRoot.replace(/\/+$/, '');
  return text.replace(ABSOLUTE_PATH, (p) => {
    const clean = p.replace(/\/+$/, '');
    if (root !== '' && clean.startsWith(`${root}/`)) return clean.slice(root.length + 1);
    return clean.slice(clean.lastIndexOf('/') + 1);
  });
}

/** ANSI escapes stripped, then at most MAX_OUTPUT_BYTES of UTF-8 (never splitting a character). */
export function reportOutput(text: string): string {
  const clean = stripAnsi(text);
  const bytes = Buffer.from(clean, 'utf8');
  if (bytes.length <= MAX_OUTPUT_BYTES) return clean;
  let end = MAX_OUTPUT_BYTES;
  // Back off while the first byte left out continues a character.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
