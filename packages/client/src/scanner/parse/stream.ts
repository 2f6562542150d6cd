import { SaxesParser } from 'saxes';
import { toHost } from './convert.ts';
import type { NmapHost, NmapProgress, NmapRun, NmapRunInfo } from './types.ts';
import { appendCapped, BoundedWriter, ItemBudget, type XmlLimits } from './xml-limits.ts';
import { attr, numAttr, type XmlNode } from './xml-node.ts';

export interface NmapXmlHandlers {
  /** Called once per `<host>` as soon as it closes; the parser keeps nothing of it afterwards. */
  onHost: (host: NmapHost) => void;
  onProgress?: ((progress: NmapProgress) => void) | undefined;
  /** A file from elsewhere (`svc import`): judges the document type declaration; throwing stops the parse. */
  onDoctype?: ((doctype: string) => void) | undefined;
  /** A file from elsewhere: depth, names, attributes, text and each host bounded (xml-limits.ts). */
  limits?: XmlLimits | undefined;
}

/**
 * Streams nmap's `-oX` output: memory holds the run's header and the one `<host>` being read,
 * never the whole document, so a scan of many hosts parses in bounded memory. Feed it chunks
 * as nmap writes them; `end()` returns the run information. A document cut short (nmap killed)
 * ends with `complete: false`; malformed XML throws.
 */
export class NmapXmlStream {
  private readonly parser = new SaxesParser({ xmlns: false });
  private readonly decoder = new TextDecoder('utf-8');
  private readonly info: NmapRunInfo = { scaninfo: [], complete: false };
  /** Open elements of the host being read; empty outside a `<host>`. */
  private readonly stack: XmlNode[] = [];
  private depth = 0;
  private readonly handlers: NmapXmlHandlers;
  private readonly bounded:
    | { writer: BoundedWriter; host: ItemBudget; header: ItemBudget; limits: XmlLimits }
    | undefined;

  constructor(handlers: NmapXmlHandlers) {
    this.handlers = handlers;
    const { limits } = handlers;
    this.bounded =
      limits === undefined
        ? undefined
        : {
            writer: new BoundedWriter(this.parser, limits),
            host: new ItemBudget(limits),
            // The run's <scaninfo> entries are all kept: bounded as one item.
            header: new ItemBudget(limits),
            limits,
          };
    this.parser.on('opentag', (tag) => this.open(tag.name, tag.attributes as Record<string, string>));
    this.parser.on('closetag', (tag) => this.close(tag.name));
    this.parser.on('text', (text) => this.text(text));
    this.parser.on('cdata', (text) => this.text(text));
    if (handlers.onDoctype !== undefined) this.parser.on('doctype', handlers.onDoctype);
  }

  write(chunk: string | Uint8Array): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.bounded === undefined) this.parser.write(text);
    else this.bounded.writer.write(text);
  }

  end(): NmapRunInfo {
    const rest = this.decoder.decode();
    if (rest !== '') this.write(rest);
    // saxes rejects unclosed elements at close(); a cut-short run is reported, not thrown.
    if (this.info.complete) this.parser.close();
    return this.info;
  }

  private open(name: string, attrs: Record<string, string>): void {
    this.depth += 1;
    const bounded = this.bounded;
    if (bounded !== undefined && this.depth > bounded.limits.maxDepth)
      throw bounded.limits.refuse(`the XML nests elements deeper than ${bounded.limits.maxDepth} levels`);
    bounded?.writer.tag(name, attrs);
    if (this.stack.length > 0 || (name === 'host' && this.depth === 2)) {
      if (this.stack.length === 0) bounded?.host.reset();
      bounded?.host.element('host', name, attrs);
      const node: XmlNode = { name, attrs, children: [], text: '' };
      this.stack.at(-1)?.children.push(node);
      this.stack.push(node);
      return;
    }
    const el: XmlNode = { name, attrs, children: [], text: '' };
    if (name === 'nmaprun') {
      this.info.version = attr(el, 'version');
      this.info.args = attr(el, 'args');
      this.info.start = numAttr(el, 'start');
    } else if (name === 'scaninfo') {
      this.bounded?.header.element('nmaprun', name, attrs);
      this.info.scaninfo.push({
        type: attrs.type ?? '',
        protocol: attrs.protocol ?? '',
        numservices: numAttr(el, 'numservices'),
        services: attr(el, 'services'),
      });
    } else if (name === 'finished') {
      this.info.finished = {
        time: numAttr(el, 'time'),
        elapsed: numAttr(el, 'elapsed'),
        exit: attr(el, 'exit'),
        summary: attr(el, 'summary'),
      };
    } else if (name === 'hosts') {
      this.info.hosts = {
        up: numAttr(el, 'up') ?? 0,
        down: numAttr(el, 'down') ?? 0,
        total: numAttr(el, 'total') ?? 0,
      };
    } else if (name === 'taskprogress') {
      this.handlers.onProgress?.({
        task: attrs.task ?? '',
        percent: numAttr(el, 'percent') ?? 0,
        remaining: numAttr(el, 'remaining'),
        etc: numAttr(el, 'etc'),
      });
    }
  }

  private close(name: string): void {
    this.depth -= 1;
    if (this.stack.length > 0) {
      const node = this.stack.pop();
      if (this.stack.length === 0 && node !== undefined) this.handlers.onHost(toHost(node));
      return;
    }
    if (name === 'nmaprun' && this.depth === 0) this.info.complete = true;
  }

  private text(text: string): void {
    const node = this.stack.at(-1);
    // Only leaf values (elem, cpe) carry text; the indentation between elements is dropped.
    if (node === undefined || (node.name !== 'elem' && node.name !== 'cpe')) return;
    const bounded = this.bounded;
    if (bounded === undefined) {
      node.text += text;
      return;
    }
    const before = node.text.length;
    node.text = appendCapped(node.text, text, bounded.limits.maxTextChars);
    bounded.host.chars('host', node.text.length - before);
  }
}

/** Parses a stream of chunks (a file or nmap's stdout), handing over each host as it completes. */
export async function parseNmapStream(
  source: AsyncIterable<string | Uint8Array>,
  handlers: NmapXmlHandlers,
): Promise<NmapRunInfo> {
  const stream = new NmapXmlStream(handlers);
  for await (const chunk of source) stream.write(chunk);
  return stream.end();
}

/** Parses a whole document held in memory (tests, small scans). */
export function parseNmapXml(xml: string): NmapRun {
  const hosts: NmapHost[] = [];
  const stream = new NmapXmlStream({ onHost: (h) => hosts.push(h) });
  stream.write(xml);
  return { info: stream.end(), hosts };
}
