/**
 * A release's SHA256SUMS as `sha256sum` writes it (and scripts/release/build.ts does): one
 * `<64 hex digits>  <file name>` per line (`*<name>` in binary mode). Anything else is refused
 * rather than skipped: a file the agent cannot read whole is not one it trusts a line of.
 */

export class ReleaseError extends Error {}

const LINE = /^([0-9a-fA-F]{64}) [ *](\S(?:.*\S)?)$/;

/** File name → lower-case SHA-256 hex. `source` names the file in messages. */
export function parseChecksums(text: string, source: string): Map<string, string> {
  const sums = new Map<string, string>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [i, raw] of lines.entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') continue;
    const m = LINE.exec(line);
    if (m === null) throw new ReleaseError(`${source} line ${i + 1} is not "<sha256>  <file>": ${line.slice(0, 120)}`);
    const [, hex, name] = m as unknown as [string, string, string];
    const known = sums.get(name);
    if (known !== undefined && known !== hex.toLowerCase())
      throw new ReleaseError(`${source} lists ${name} twice with different checksums`);
    sums.set(name, hex.toLowerCase());
  }
  if (sums.size === 0) throw new ReleaseError(`${source} lists no file`);
  return sums;
}
