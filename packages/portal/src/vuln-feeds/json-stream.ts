import { JSONParser } from '@streamparser/json';
import { feedRefused } from './input.ts';

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
 * size). Anything that is not a JSON object, or JSON that breaks off, is refused with the
 * parser's reason.
 */
export async function* jsonItems(chunks: AsyncIterable<Buffer>, label: string, paths: string[]): AsyncGenerator<JsonItem> {
  const parser = new JSONParser({ paths: paths.map((p) => `$.${p}`), keepStack: false });
  const ready: JsonItem[] = [];
  parser.onValue = ({ value, key, stack }) => {
    const keys = [...stack.slice(1).map((s) => s.key), key].map((k) => (typeof k === 'number' ? '*' : String(k)));
    ready.push({ path: keys.join('.'), value });
  };
  let started = false;
  let sinceValue = 0;
  const refuse = (err: unknown) => feedRefused(label, `not valid JSON (${(err as Error).message})`);
  for await (const chunk of chunks) {
    if (!started) {
      const text = chunk.toString('utf8', 0, Math.min(chunk.length, 64)).replace(/^\uFEFF/, '').trimStart();
      if (text === '') continue;
      if (!text.startsWith('{')) throw feedRefused(label, 'not a JSON object');
      started = true;
    }
    try {
      parser.write(chunk);
    } catch (err) {
      throw refuse(err);
    }
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
  yield* ready.splice(0);
}
