/**
 * What may stand before an XML declaration in files people have: XML allows `<?xml ...?>` only
 * as the very first characters, yet real exports carry a licence comment above it
 * (secureCodeBox's nmap test files), white space, or a byte order mark left by an editor. The
 * document is otherwise well formed, so that prefix is dropped when it is only white space, BOMs
 * and comments and an XML declaration follows; anything else is passed on unchanged for the
 * parser to judge. At most PROLOG_LIMIT characters are held while deciding.
 */

const PROLOG_LIMIT = 64 * 1024;
const WHITE = new Set([0x20, 0x09, 0x0a, 0x0d, 0xfeff]);

export class XmlPrologTrim {
  #held = '';
  #done = false;

  /** The text to hand to the parser now (empty while still deciding). */
  push(text: string): string {
    if (this.#done) return text;
    this.#held += text;
    const at = this.#declarationAt();
    if (at === undefined && this.#held.length <= PROLOG_LIMIT) return '';
    this.#done = true;
    const out = this.#held.slice(at ?? 0);
    this.#held = '';
    return out;
  }

  /** Whatever is still held once the input ended. */
  end(): string {
    this.#done = true;
    const out = this.#held;
    this.#held = '';
    return out;
  }

  /**
   * Where the XML declaration starts after a droppable prefix; 0 when there is nothing to drop or
   * something else comes first; undefined while the held text ends before that is known.
   */
  #declarationAt(): number | undefined {
    const s = this.#held;
    let i = 0;
    for (;;) {
      while (i < s.length && WHITE.has(s.charCodeAt(i))) i += 1;
      if (i >= s.length) return undefined;
      if (s.startsWith('<!--', i)) {
        const close = s.indexOf('-->', i + 4);
        if (close === -1) return undefined;
        i = close + 3;
        continue;
      }
      if (s.length - i < 6) return '<?xml'.startsWith(s.slice(i)) || '<!--'.startsWith(s.slice(i)) ? undefined : 0;
      return /^<\?xml[\s?]/.test(s.slice(i, i + 6)) ? i : 0;
    }
  }
}
