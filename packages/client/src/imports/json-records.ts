import { ImportError, MAX_LINE_BYTES, MAX_LINE_VALUES, readChunks } from './guard.ts';

/**
 * The JSON objects of a file, one at a time, in either shape Nuclei writes: JSON lines (`-jsonl`,
 * one object a line) or one JSON array (`-json-export`, usually indented over many lines). Each
 * object's text is bounded before JSON.parse builds anything from it: at most MAX_LINE_BYTES
 * and MAX_LINE_VALUES, the limits a line always had, so memory stays bounded whatever the file.
 * The array is split here rather than by a streaming JSON library because those build each value
 * as they read it, before any bound could be checked.
 */

export type JsonShape = 'lines' | 'array';
type Json = Record<string, unknown>;

export interface JsonRecordsRead {
  shape: JsonShape;
  /** Objects read. */
  records: number;
}

/** Whether a JSON text opens more than MAX_LINE_VALUES objects, arrays or entries (`{`, `[`, `,` outside strings). */
export function tooManyValues(text: string): boolean {
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if ((c === 0x7b || c === 0x5b || c === 0x2c) && ++values > MAX_LINE_VALUES) return true;
  }
  return false;
}

const MIB = 1024 * 1024;

/** Parses one record's text into an object, or refuses it naming where it is (`line 3`, `element 2`). */
function parsed(text: string, where: string, shape: JsonShape): Json {
  const what = shape === 'lines' ? 'Nuclei JSON lines' : 'a Nuclei JSON array';
  if (tooManyValues(text))
    throw new ImportError(`Refused: ${where} holds more than ${MAX_LINE_VALUES} JSON values (not a Nuclei result)`);
  let r: unknown;
  try {
    r = JSON.parse(text);
  } catch {
    throw new ImportError(`Not ${what}: ${where} is not JSON (a truncated or other file)`);
  }
  if (typeof r !== 'object' || r === null || Array.isArray(r))
    throw new ImportError(
      shape === 'lines'
        ? `Not Nuclei JSON lines: ${where} is not a JSON object (nuclei -jsonl writes one a line)`
        : `Not a Nuclei JSON array: ${where} is not a JSON object (nuclei -json-export writes an array of results)`,
    );
  return r as Json;
}

/** Reads the file's objects, each handed to `onRecord` with where it is; blank lines are skipped. */
export async function readJsonRecords(
  file: string,
  maxBytes: number,
  onRecord: (r: Json, where: string) => void,
): Promise<JsonRecordsRead> {
  const decoder = new TextDecoder('utf-8');
  let reader: LineReader | ArrayReader | undefined;
  let records = 0;
  const take = (text: string, where: string, shape: JsonShape) => {
    records += 1;
    onRecord(parsed(text, where, shape), where);
  };
  const feed = (text: string) => {
    if (reader === undefined) {
      const first = /\S/.exec(text.replace(/^\uFEFF/, ''));
      if (first === null) return;
      reader = first[0] === '[' ? new ArrayReader(take) : new LineReader(take);
    }
    reader.write(text);
  };
  for await (const chunk of readChunks(file, maxBytes)) feed(decoder.decode(chunk, { stream: true }));
  feed(decoder.decode());
  reader?.end();
  return { shape: reader instanceof ArrayReader ? 'array' : 'lines', records };
}

type Take = (text: string, where: string, shape: JsonShape) => void;

/** JSON lines: each line's parts joined only once it ends, refused past MAX_LINE_BYTES. */
class LineReader {
  #parts: string[] = [];
  #pending = 0;
  #line = 0;
  readonly #take: Take;
  constructor(take: Take) {
    this.#take = take;
  }
  write(text: string): void {
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      this.#check(nl - from);
      this.#parts.push(text.slice(from, nl));
      this.#flush();
      from = nl + 1;
    }
    this.#check(text.length - from);
    this.#pending += text.length - from;
    this.#parts.push(text.slice(from));
  }
  end(): void {
    this.#flush();
  }
  #check(more: number): void {
    // Characters, not bytes: a character is at least one byte, so the bound holds.
    if (this.#pending + more > MAX_LINE_BYTES)
      throw new ImportError(
        `Refused: line ${this.#line + 1} is longer than ${MAX_LINE_BYTES / MIB} MiB (not Nuclei JSON lines)`,
      );
  }
  #flush(): void {
    this.#line += 1;
    const line = this.#parts.join('').replace(/^\uFEFF/, '');
    this.#parts = [];
    this.#pending = 0;
    if (line.trim() !== '') this.#take(line, `line ${this.#line}`, 'lines');
  }
}

/** One JSON array: the text of each top-level element cut out by tracking strings and nesting. */
class ArrayReader {
  #depth = 0;
  #inString = false;
  #escaped = false;
  #closed = false;
  #element = 0;
  #parts: string[] = [];
  #length = 0;
  readonly #take: Take;
  constructor(take: Take) {
    this.#take = take;
  }
  write(text: string): void {
    let start = this.#depth >= 2 || this.#inString ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === 0x5c) this.#escaped = true;
        else if (c === 0x22) this.#inString = false;
        continue;
      }
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0xfeff) continue;
      if (this.#closed) throw new ImportError('Not a Nuclei JSON array: text follows the closing ]');
      if (this.#depth === 0) {
        if (c !== 0x5b) throw new ImportError('Not a Nuclei JSON array: it does not start with [');
        this.#depth = 1;
        continue;
      }
      if (this.#depth === 1) {
        if (c === 0x2c) continue;
        if (c === 0x5d) {
          this.#closed = true;
          this.#depth = 0;
          continue;
        }
        if (c !== 0x7b)
          throw new ImportError(
            `Not a Nuclei JSON array: element ${this.#element + 1} is not a JSON object (nuclei -json-export writes an array of results)`,
          );
        start = i;
        this.#depth = 2;
        continue;
      }
      if (c === 0x22) this.#inString = true;
      else if (c === 0x7b || c === 0x5b) this.#depth += 1;
      else if (c === 0x7d || c === 0x5d) {
        this.#depth -= 1;
        if (this.#depth === 1) {
          this.#add(text.slice(start, i + 1));
          start = -1;
          this.#finish();
        }
      }
    }
    if (start !== -1) this.#add(text.slice(start));
  }
  end(): void {
    if (!this.#closed)
      throw new ImportError(
        this.#depth === 0
          ? 'Not a Nuclei JSON array: it does not start with ['
          : `The Nuclei JSON array is cut short: it ends inside element ${this.#element + 1}, before its closing ]`,
      );
  }
  #add(part: string): void {
    this.#length += part.length;
    if (this.#length > MAX_LINE_BYTES)
      throw new ImportError(
        `Refused: element ${this.#element + 1} is longer than ${MAX_LINE_BYTES / MIB} MiB (not a Nuclei JSON array)`,
      );
    this.#parts.push(part);
  }
  #finish(): void {
    this.#element += 1;
    const text = this.#parts.join('');
    this.#parts = [];
    this.#length = 0;
    this.#take(text, `element ${this.#element}`, 'array');
  }
}
