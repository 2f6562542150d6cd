import { Tokenizer, TokenParser } from '@streamparser/json';
import TokenType from '@streamparser/json/utils/types/tokenType.js';
import type { DomainError } from '../domain/errors.ts';
import { feedRefused, nulRefused } from './input.ts';

/** A value the parser completed: its path from the root (`vulnerabilities.*`, `catalogVersion`). */
export interface JsonItem {
  path: string;
  value: unknown;
}

/** Bytes read without completing one wanted value: the bound on what one record may hold in memory. */
export const MAX_RECORD_BYTES = 64 * 1024 ** 2;

/**
 * The values at `paths` of a JSON object streamed in chunks, each yielded as soon as it is
 * complete and then dropped by the parser (memory stays at one record, whatever the file's
 * size). A top-level key named in `lists` is reported as `{path: key, value: []}` when its
 * array opens: asking the parser for the array itself would make it keep every element until
 * the array ends. Anything that is not a JSON object, or JSON that breaks off, is refused with
 * the parser's reason.
 */
export async function* jsonItems(
  chunks: AsyncIterable<Buffer>,
  label: string,
  paths: string[],
  lists: string[] = [],
): AsyncGenerator<JsonItem> {
  // The tokenizer and token parser wired as JSONParser wires them, with a look at the tokens between.
  const parser = new Tokenizer();
  const tokens = new TokenParser({ paths: paths.map((p) => `$.${p}`), keepStack: false });
  parser.onEnd = () => {
    if (!tokens.isEnded) tokens.end();
  };
  tokens.onError = parser.error.bind(parser);
  tokens.onEnd = () => {
    if (!parser.isEnded) parser.end();
  };
  const ready: JsonItem[] = [];
  let depth = 0;
  // The last two tokens directly inside the root object: a key and its colon before a `[`.
  let before: { token: TokenType; value: unknown } | undefined;
  let last: { token: TokenType; value: unknown } | undefined;
  // The previous token and the key of the last colon (scalars: this runs for every token of a
  // 2 GB file), to name the field of a string holding a NUL.
  let previous: TokenType | undefined;
  let previousValue: unknown;
  let key = '';
  // A string holding a NUL, anywhere in the file (even a key or a field no feed reader uses).
  let nul: DomainError | null = null;
  parser.onToken = (info) => {
    const { token, value } = info;
    if (nul === null && token === TokenType.STRING && (value as string).includes('\u0000')) {
      const where = previous === TokenType.COLON ? `the value of ${JSON.stringify(key.slice(0, 40))}` : 'a string';
      nul = nulRefused(label, `in ${where} at byte ${info.offset}`);
    }
    if (token === TokenType.COLON) key = String(previousValue);
    previous = token;
    previousValue = value;
    if (
      token === TokenType.LEFT_BRACKET &&
      depth === 1 &&
      before?.token === TokenType.STRING &&
      last?.token === TokenType.COLON &&
      lists.includes(String(before.value))
    )
      ready.push({ path: String(before.value), value: [] });
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) depth++;
    else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) depth--;
    if (depth === 1) [before, last] = [last, { token, value }];
    tokens.write(info);
  };
  tokens.onValue = ({ value, key, stack }) => {
    const keys = [...stack.slice(1).map((s) => s.key), key].map((k) => (typeof k === 'number' ? '*' : String(k)));
    ready.push({ path: keys.join('.'), value });
  };
  let started = false;
  let sinceValue = 0;
  const refuse = (err: unknown) => feedRefused(label, `not valid JSON (${(err as Error).message})`);
  let first = true;
  let offset = 0;
  for await (const read of chunks) {
    // A byte-order mark is not JSON; some tools write one.
    const chunk = first && read[0] === 0xef && read[1] === 0xbb && read[2] === 0xbf ? read.subarray(3) : read;
    first = false;
    if (!started) {
      const at = chunk.findIndex((b) => b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d);
      if (at >= 0 && chunk[at] !== 0x7b) throw feedRefused(label, 'not a JSON object');
      started = at >= 0;
    }
    // A raw NUL byte is never JSON: named as one rather than as the parser's unprintable complaint.
    const zero = chunk.indexOf(0);
    if (zero >= 0) throw nulRefused(label, `at byte ${offset + zero}`);
    offset += chunk.length;
    try {
      parser.write(chunk);
    } catch (err) {
      throw refuse(err);
    }
    if (nul !== null) throw nul;
    sinceValue = ready.length > 0 ? 0 : sinceValue + chunk.length;
    if (sinceValue > MAX_RECORD_BYTES)
      throw feedRefused(label, `more than ${MAX_RECORD_BYTES / 1024 ** 2} MB without one complete record`);
    yield* ready.splice(0);
  }
  if (!started) throw feedRefused(label, 'the file is empty');
  if (!parser.isEnded) {
    try {
      parser.end();
    } catch {
      throw feedRefused(label, 'the JSON breaks off before its end (truncated file?)');
    }
  }
  if (nul !== null) throw nul;
  yield* ready.splice(0);
}
