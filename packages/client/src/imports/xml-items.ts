import { SaxesParser } from 'saxes';
import type { XmlNode } from '../scanner/parse/xml-node.ts';
import { fieldText, ImportError, MAX_FIELD_CHARS, readChunks, refuseDoctype, tooDeep } from './guard.ts';

/**
 * Streams an XML report and hands over one item subtree at a time (a Nessus ReportHost, a
 * Greenbone result): memory holds the path of open elements and the item being read, never the
 * document. `isItem` says, from the path of element names (root first), where an item starts.
 */
export interface XmlItemSpec {
  /** Root element names this format accepts; anything else is the wrong format. */
  roots: readonly string[];
  /** Human name of the format, for errors. */
  format: string;
  isItem: (path: readonly string[]) => boolean;
  onItem: (path: readonly string[], node: XmlNode) => void;
}

export async function streamXmlItems(file: string, maxBytes: number, spec: XmlItemSpec): Promise<void> {
  const parser = new SaxesParser({ xmlns: false });
  const decoder = new TextDecoder('utf-8');
  const path: string[] = [];
  const stack: XmlNode[] = [];
  let itemDepth = 0;
  let rootSeen = false;
  let ended = false;
  parser.on('doctype', refuseDoctype);
  parser.on('opentag', (tag) => {
    if (path.length >= 64) throw tooDeep();
    if (!rootSeen) {
      rootSeen = true;
      if (!spec.roots.includes(tag.name))
        throw new ImportError(
          `Not a ${spec.format} file: the root element is <${tag.name}>, expected <${spec.roots.join('> or <')}>`,
        );
    }
    path.push(tag.name);
    if (stack.length > 0 || spec.isItem(path)) {
      const node: XmlNode = { name: tag.name, attrs: tag.attributes as Record<string, string>, children: [], text: '' };
      stack.at(-1)?.children.push(node);
      if (stack.length === 0) itemDepth = path.length;
      stack.push(node);
    }
  });
  parser.on('closetag', () => {
    if (stack.length > 0) {
      const node = stack.pop()!;
      node.text = fieldText(node.text);
      if (stack.length === 0 && path.length === itemDepth) spec.onItem(path, node);
    }
    path.pop();
    if (path.length === 0) ended = true;
  });
  const text = (t: string) => {
    const node = stack.at(-1);
    // Text beyond the field limit is dropped as it arrives, so one huge field stays bounded.
    if (node !== undefined && node.text.length <= MAX_FIELD_CHARS) node.text += t;
  };
  parser.on('text', text);
  parser.on('cdata', text);
  try {
    for await (const chunk of readChunks(file, maxBytes)) parser.write(decoder.decode(chunk, { stream: true }));
    parser.write(decoder.decode());
    if (!rootSeen) throw new ImportError(`Not a ${spec.format} file: no XML element in it`);
    if (!ended)
      throw new ImportError(`${file} is cut short: it ends inside <${path.at(-1)}> (a truncated ${spec.format} file)`);
    parser.close();
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(`Malformed ${spec.format} XML: ${(err as Error).message}`);
  }
}
