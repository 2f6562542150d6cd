import { SaxesParser } from 'saxes';
import { appendCapped, BoundedWriter, ItemBudget } from '../scanner/parse/xml-limits.ts';
import type { XmlNode } from '../scanner/parse/xml-node.ts';
import { IMPORT_XML_LIMITS, ImportError, readChunks, refuseDoctype } from './guard.ts';
import { XmlPrologTrim } from './xml-prolog.ts';

/**
 * Streams an XML report and hands over one item subtree at a time (a Nessus ReportItem, a
 * Greenbone result): memory holds the path of open elements and the item being read, never the
 * document, and the parser and the item are bounded (guard.ts IMPORT_XML_LIMITS): each text and
 * attribute value is kept to the field cut while it arrives, an item holds a bounded number of
 * elements and characters. `isItem` says, from the path of element names (root first), where an
 * item starts.
 */
export interface XmlItemSpec {
  /** Root element names this format accepts; anything else is the wrong format. */
  roots: readonly string[];
  /** Human name of the format, for errors. */
  format: string;
  isItem: (path: readonly string[]) => boolean;
  onItem: (path: readonly string[], node: XmlNode) => void;
  /** An element outside any item opens (a Nessus ReportHost, with its name). */
  onOpen?: (path: readonly string[], attrs: Readonly<Record<string, string>>) => void;
  /** An element outside any item closes. */
  onClose?: (path: readonly string[]) => void;
}

export async function streamXmlItems(file: string, maxBytes: number, spec: XmlItemSpec): Promise<void> {
  const limits = IMPORT_XML_LIMITS;
  const parser = new SaxesParser({ xmlns: false });
  const writer = new BoundedWriter(parser, limits);
  const budget = new ItemBudget(limits);
  const decoder = new TextDecoder('utf-8');
  const path: string[] = [];
  const stack: XmlNode[] = [];
  let itemDepth = 0;
  let rootSeen = false;
  let ended = false;
  parser.on('doctype', refuseDoctype);
  parser.on('opentag', (tag) => {
    if (path.length >= limits.maxDepth)
      throw limits.refuse(`the XML nests elements deeper than ${limits.maxDepth} levels`);
    if (!rootSeen) {
      rootSeen = true;
      if (!spec.roots.includes(tag.name))
        throw new ImportError(
          `Not a ${spec.format} file: the root element is <${tag.name}>, expected <${spec.roots.join('> or <')}>`,
        );
    }
    const attrs = tag.attributes as Record<string, string>;
    writer.tag(tag.name, attrs);
    path.push(tag.name);
    if (stack.length === 0 && !spec.isItem(path)) {
      spec.onOpen?.(path, attrs);
      return;
    }
    if (stack.length === 0) {
      itemDepth = path.length;
      budget.reset();
    }
    budget.element(path[itemDepth - 1]!, tag.name, attrs);
    const node: XmlNode = { name: tag.name, attrs, children: [], text: '' };
    stack.at(-1)?.children.push(node);
    stack.push(node);
  });
  parser.on('closetag', () => {
    if (stack.length > 0) {
      const node = stack.pop()!;
      node.text = node.text.trimEnd();
      if (stack.length === 0 && path.length === itemDepth) spec.onItem(path, node);
    } else spec.onClose?.(path);
    path.pop();
    if (path.length === 0) ended = true;
  });
  const text = (t: string) => {
    const node = stack.at(-1);
    if (node === undefined) return;
    // Text past the field cut is dropped as it arrives, so one huge field stays bounded.
    const before = node.text.length;
    node.text = appendCapped(node.text, t, limits.maxTextChars);
    budget.chars(path[itemDepth - 1]!, node.text.length - before);
  };
  parser.on('text', text);
  parser.on('cdata', text);
  try {
    const prolog = new XmlPrologTrim();
    for await (const chunk of readChunks(file, maxBytes))
      writer.write(prolog.push(decoder.decode(chunk, { stream: true })));
    writer.write(prolog.push(decoder.decode()) + prolog.end());
    if (!rootSeen) throw new ImportError(`Not a ${spec.format} file: no XML element in it`);
    if (!ended)
      throw new ImportError(`${file} is cut short: it ends inside <${path.at(-1)}> (a truncated ${spec.format} file)`);
    parser.close();
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(`Malformed ${spec.format} XML: ${(err as Error).message}`);
  }
}
