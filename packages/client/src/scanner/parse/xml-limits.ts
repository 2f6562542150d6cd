import type { SaxesParser } from 'saxes';

/**
 * Bounds on what a SaxesParser and the item tree built from its events may hold while reading
 * an untrusted XML file (`svc import`). saxes gathers a text node, an attribute value, a
 * comment, a CDATA section or a document type in one string until it ends, and names and an
 * element's attributes likewise, whatever their length: a 300 MB text node is a 300 MB string
 * before any event fires. It has no option to stop that, so the file is written to it in
 * pieces of at most 64 Ki characters and, after each piece, what it has gathered is cut back
 * (text) or refused (names, attributes). The numbers are the caller's (imports/guard.ts).
 */
export interface XmlLimits {
  /** Deepest element nesting accepted. */
  maxDepth: number;
  /** Characters of one text, attribute value, comment or CDATA section kept while reading; the rest is dropped. */
  maxTextChars: number;
  /** Longest element, attribute, entity or processing-instruction name accepted. */
  maxNameChars: number;
  /** Most attributes on one element. */
  maxAttributes: number;
  /** Most elements in one item (a host, a result) held at once. */
  maxItemElements: number;
  /** Most characters (attribute values and texts, after the cut above) in one item held at once. */
  maxItemChars: number;
  /** The error that stops the parse, given the reason (`an XML name longer than ...`). */
  refuse: (reason: string) => Error;
}

/** One piece written to the parser at most: what it may gather between two checks. */
const PIECE_CHARS = 64 * 1024;

/**
 * The parser's private buffers (saxes 6: `text`, `name`, `entity`, `piTarget`, `attribList`).
 * Read and cut here only; checked to exist when the parser is made, so an upgrade of saxes that
 * renames them fails every import test instead of silently lifting the bound.
 */
interface SaxesBuffers {
  text: string;
  name: string;
  entity: string;
  piTarget: string;
  attribList: unknown[];
}

function buffersOf(parser: SaxesParser): SaxesBuffers {
  const b = parser as unknown as SaxesBuffers;
  for (const key of ['text', 'name', 'entity', 'piTarget'] as const)
    if (typeof b[key] !== 'string') throw new Error(`saxes changed: no ${key} buffer to bound (xml-limits.ts)`);
  if (!Array.isArray(b.attribList)) throw new Error('saxes changed: no attribList to bound (xml-limits.ts)');
  return b;
}

/** Writes text to a parser in bounded pieces, cutting or refusing what it gathers after each. */
export class BoundedWriter {
  readonly #parser: SaxesParser;
  readonly #buffers: SaxesBuffers;
  readonly #limits: XmlLimits;

  constructor(parser: SaxesParser, limits: XmlLimits) {
    this.#parser = parser;
    this.#buffers = buffersOf(parser);
    this.#limits = limits;
  }

  write(text: string): void {
    for (let at = 0; at < text.length; at += PIECE_CHARS) {
      this.#parser.write(text.length <= PIECE_CHARS ? text : text.slice(at, at + PIECE_CHARS));
      this.#check();
    }
  }

  /** An element as it opens: a name or attributes past the limits within one piece are refused here. */
  tag(name: string, attrs: Readonly<Record<string, string>>): void {
    const { maxNameChars, maxAttributes, refuse } = this.#limits;
    let count = 0;
    for (const key in attrs) {
      count += 1;
      if (key.length > maxNameChars) throw refuse(`the XML has a name longer than ${maxNameChars} characters`);
    }
    if (name.length > maxNameChars) throw refuse(`the XML has a name longer than ${maxNameChars} characters`);
    if (count > maxAttributes) throw refuse(`an XML element has more than ${maxAttributes} attributes`);
  }

  #check(): void {
    const b = this.#buffers;
    const { maxTextChars, maxNameChars, maxAttributes, refuse } = this.#limits;
    // Leading white space is dropped first: every kept text is trimmed (imports/guard.ts fieldText).
    if (b.text.length > maxTextChars) b.text = b.text.trimStart().slice(0, maxTextChars + 1);
    if (b.name.length > maxNameChars || b.entity.length > maxNameChars || b.piTarget.length > maxNameChars)
      throw refuse(`the XML has a name longer than ${maxNameChars} characters`);
    if (b.attribList.length > maxAttributes) throw refuse(`an XML element has more than ${maxAttributes} attributes`);
  }
}

/** The elements and characters of the item being read, refused past the limits. */
export class ItemBudget {
  #elements = 0;
  #chars = 0;
  readonly #limits: XmlLimits;

  constructor(limits: XmlLimits) {
    this.#limits = limits;
  }

  /** A new item starts: nothing of the previous one is held any more. */
  reset(): void {
    this.#elements = 0;
    this.#chars = 0;
  }

  /** One more element of the item, with its name and attributes. */
  element(item: string, name: string, attrs: Readonly<Record<string, string>>): void {
    this.#elements += 1;
    if (this.#elements > this.#limits.maxItemElements)
      throw this.#limits.refuse(`one <${item}> holds more than ${this.#limits.maxItemElements} elements`);
    let chars = name.length;
    for (const key in attrs) chars += key.length + (attrs[key]?.length ?? 0);
    this.chars(item, chars);
  }

  chars(item: string, n: number): void {
    this.#chars += n;
    if (this.#chars > this.#limits.maxItemChars)
      throw this.#limits.refuse(`one <${item}> holds more than ${this.#limits.maxItemChars} characters of text`);
  }
}

/**
 * `current` with `piece` appended, kept to `max + 1` characters (one over, so the cut rule
 * still sees that something was dropped); leading white space of the first piece dropped.
 */
export function appendCapped(current: string, piece: string, max: number): string {
  const room = max + 1 - current.length;
  if (room <= 0) return current;
  const add = current === '' ? piece.trimStart() : piece;
  return current + (add.length > room ? add.slice(0, room) : add);
}
