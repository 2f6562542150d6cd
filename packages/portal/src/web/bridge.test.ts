import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  bridgeInsertionIndex,
  bridgeInserter,
  bridgeScript,
  insertBridge,
  insertBridgeBytes,
  scriptJson,
} from './bridge.ts';

const BRIDGE = '<script>/*bridge*/</script>';

/** A report as the scanner writes it: the consultation block and a script template holding a closing body tag. */
const REPORT = `<!DOCTYPE html>
<html><head><title>Report</title></head>
<body>
<section id="consultation-section" class="consultation-section"><button id="scheduleBtn">Schedule</button></section>
<script>var printable = "<html><body>" + document.body.innerHTML + "</body></html>";</script>
</body>
</html>
`;

describe('bridgeInsertionIndex', () => {
  it('finds the last closing body tag, not one inside a script string', () => {
    const last = REPORT.lastIndexOf('</body>');
    expect(REPORT.indexOf('</body>')).toBeLessThan(last);
    expect(bridgeInsertionIndex(REPORT)).toBe(last);
  });

  it('matches case-insensitively and with whitespace before >', () => {
    expect(bridgeInsertionIndex('<body>a</BODY>')).toBe(7);
    expect(bridgeInsertionIndex('<body>a</Body  \n>')).toBe(7);
    expect(bridgeInsertionIndex('<body>"</body>" b</bOdY>tail')).toBe(17);
  });

  it('is the end of the document when there is no closing body tag', () => {
    expect(bridgeInsertionIndex('<p>no body</p>')).toBe(14);
    expect(bridgeInsertionIndex('')).toBe(0);
    // `</bodyx>` and `<body>` are not closing body tags.
    expect(bridgeInsertionIndex('<body></bodyx>')).toBe(14);
  });
});

describe('insertBridge', () => {
  it('puts the bridge right before the last </body> and keeps everything else', () => {
    const out = insertBridge(REPORT, BRIDGE);
    expect(out).toBe(REPORT.replace(/<\/body>\n<\/html>\n$/, `${BRIDGE}</body>\n</html>\n`));
    // The report's own script string is untouched.
    expect(out).toContain('"<html><body>" + document.body.innerHTML + "</body></html>"');
    expect(out).toContain(
      '<section id="consultation-section" class="consultation-section"><button id="scheduleBtn">Schedule</button></section>',
    );
    expect(out.lastIndexOf(BRIDGE)).toBe(out.lastIndexOf('</body>') - BRIDGE.length);
    expect(out.split(BRIDGE)).toHaveLength(2);
  });

  it('appends when the report has no closing body tag', () => {
    expect(insertBridge('<p>x</p>', BRIDGE)).toBe(`<p>x</p>${BRIDGE}`);
  });

  it('a first-match replace would be wrong: the difference on the sample report', () => {
    const naive = REPORT.replace('</body>', `${BRIDGE}</body>`);
    expect(insertBridge(REPORT, BRIDGE)).not.toBe(naive);
  });
});

describe('insertBridgeBytes', () => {
  it('equals insertBridge for UTF-8 reports with non-ASCII text', () => {
    const report = `<body><p>Prüfbericht – 東京 ✓</p><script>"</body>"</script></body>`;
    const out = insertBridgeBytes(Buffer.from(report, 'utf8'), '<script>/* é */</script>');
    expect(out.toString('utf8')).toBe(insertBridge(report, '<script>/* é */</script>'));
  });

  it('passes bytes that are not valid UTF-8 through unchanged', () => {
    const report = Buffer.concat([Buffer.from('<body>'), Buffer.from([0xff, 0xfe, 0x80]), Buffer.from('</body>')]);
    const out = insertBridgeBytes(report, 'B');
    expect([...out]).toEqual([...Buffer.from('<body>'), 0xff, 0xfe, 0x80, ...Buffer.from('B</body>')]);
  });
});

describe('scriptJson', () => {
  it('cannot close the script element or open a comment', () => {
    const json = scriptJson({ client: '</script><script>alert(1)</script><!--', x: 'a\u2028b&' });
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual({ client: '</script><script>alert(1)</script><!--', x: 'a\u2028b&' });
  });
});

describe('bridgeScript', () => {
  const context = { sessionId: '20250101_120000</script>', baseUrl: 'https://portal.example.com/svc' };

  it('is one script element whose data cannot break out of it', () => {
    const script = bridgeScript(context);
    expect(script.startsWith('<script data-svc-share-bridge="1">')).toBe(true);
    expect(script.match(/<\/script/gi)).toHaveLength(1);
    expect(script.trimEnd().endsWith('</script>')).toBe(true);
    expect(script).not.toContain('</body');
  });

  it('is valid JavaScript that carries the share context', () => {
    const script = bridgeScript(context);
    const source = script.replace(/^<script[^>]*>/, '').replace(/<\/script>\s*$/, '');
    expect(() => new vm.Script(source)).not.toThrow();
    const share = JSON.parse(/var share = (.*);\n/.exec(source)![1]!);
    // Only what the button needs: no token, no client or target (the share page shows those).
    expect(share).toEqual({ session_id: '20250101_120000</script>', portal_origin: 'https://portal.example.com' });
  });

  it('wires the schedule button against a minimal DOM, and adds nothing to the page', () => {
    const source = bridgeScript(context)
      .replace(/^<script[^>]*>/, '')
      .replace(/<\/script>\s*$/, '');
    // A tiny stand-in for the browser DOM: enough to run the bridge and observe what it does.
    type El = {
      id?: string;
      tag: string;
      attrs: Record<string, string>;
      children: El[];
      style: Record<string, string>;
      textContent?: string;
      href?: string;
      target?: string;
      rel?: string;
      listeners: Record<string, ((e: unknown) => void)[]>;
    };
    const el = (tag: string, attrs: Record<string, string> = {}): El & Record<string, unknown> => {
      const node: any = { tag, attrs, children: [], style: {}, listeners: {} };
      node.setAttribute = (k: string, v: string) => (node.attrs[k] = v);
      node.getAttribute = (k: string) => node.attrs[k] ?? null;
      node.appendChild = (c: El) => node.children.push(c);
      node.addEventListener = (t: string, f: (e: unknown) => void) => {
        node.listeners[t] ??= [];
        node.listeners[t].push(f);
      };
      node.closest = () => null;
      node.querySelector = () => null;
      return node;
    };
    const button = el('button', { id: 'scheduleBtn' });
    const mailto = el('a', { href: 'mailto:consult@example.com' });
    const section = el('section', { id: 'consultation-section' });
    const body: any = el('body');
    body.firstChild = section;
    body.insertBefore = (n: El) => body.children.unshift(n);
    section.querySelector = (sel: string) => (sel.includes('mailto') ? mailto : null);
    const opened: unknown[] = [];
    const posted: unknown[] = [];
    const window: any = { open: (...a: unknown[]) => opened.push(a) };
    window.parent = { postMessage: (m: unknown, o: string) => posted.push([m, o]) };
    const document = {
      readyState: 'complete',
      body,
      createElement: (tag: string) => el(tag),
      getElementById: (id: string) => ({ scheduleBtn: button, 'consultation-section': section })[id] ?? null,
      querySelector: () => null,
    };
    vm.runInNewContext(source, { window, document, encodeURIComponent, String });

    expect(body.children).toEqual([]);
    expect(button.attrs['data-svc-bridge']).toBe('wired');

    let prevented = false;
    for (const f of button.listeners['click']!) f({ preventDefault: () => (prevented = true) });
    expect(posted).toEqual([
      [
        { type: 'svc-share:schedule-consultation', session_id: '20250101_120000</script>' },
        'https://portal.example.com',
      ],
    ]);
    // No window of its own (the frame has no allow-popups): the share page opens the contact.
    expect(opened).toEqual([]);
    expect(prevented).toBe(true);
  });
});

/** Runs `report` through the streaming inserter in the given chunks and returns what comes out. */
async function streamed(
  chunks: Buffer[],
  bridge: string,
  tailBytes: number,
): Promise<{ out: Buffer; pushes: number[] }> {
  const parts: Buffer[] = [];
  const pushes: number[] = [];
  const inserter = bridgeInserter(bridge, tailBytes);
  inserter.on('data', (c: Buffer) => {
    parts.push(c);
    pushes.push(c.length);
  });
  await pipeline(Readable.from(chunks), inserter);
  return { out: Buffer.concat(parts), pushes };
}

function split(buf: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

describe('bridgeInserter (the share page streams the report)', () => {
  const report = Buffer.from(REPORT, 'utf8');

  it('equals insertBridgeBytes for every chunk size, the closing tag split at every boundary', async () => {
    for (let size = 1; size <= report.length; size++) {
      const { out } = await streamed(split(report, size), BRIDGE, 64);
      expect(out.toString('utf8'), `chunk size ${size}`).toBe(insertBridge(REPORT, BRIDGE));
    }
  });

  it('a split of exactly two chunks at every offset, with the tag case and whitespace varied', async () => {
    const doc = Buffer.from('<body><script>var t = "</body>";</script><p>é</p></BoDy \n>\n</html>', 'utf8');
    const expected = insertBridgeBytes(doc, BRIDGE);
    for (let at = 0; at <= doc.length; at++) {
      const { out } = await streamed([doc.subarray(0, at), doc.subarray(at)], BRIDGE, 32);
      expect(out.equals(expected), `split at ${at}`).toBe(true);
    }
  });

  it('finds the last tag inside the tail, not the one in a script string further up', async () => {
    const doc = Buffer.from(`<body>${'x'.repeat(5000)}<script>"</body>"</script>${'y'.repeat(5000)}</body></html>`);
    const { out } = await streamed(split(doc, 700), BRIDGE, 1024);
    expect(out.equals(insertBridgeBytes(doc, BRIDGE))).toBe(true);
  });

  it('searches exactly the last tailBytes, whatever the chunk sizes', async () => {
    // The tag starts 1 byte before the window: never found, even when one chunk holds it all.
    const doc = Buffer.from(`<body></body>${'z'.repeat(100)}`);
    for (const size of [1, 7, 50, doc.length]) {
      const { out } = await streamed(split(doc, size), BRIDGE, doc.length - 7);
      expect(out.toString(), `chunk size ${size}`).toBe(`${doc}${BRIDGE}`);
      // Starting right at the window's first byte, it is found.
      const found = await streamed(split(doc, size), BRIDGE, doc.length - 6);
      expect(found.out.toString(), `chunk size ${size}`).toBe(`<body>${BRIDGE}</body>${'z'.repeat(100)}`);
    }
  });

  it('appends the bridge when the tail has no closing body tag (one far above the tail does not count)', async () => {
    const doc = Buffer.from(`<body></body>${'z'.repeat(4096)}`);
    const { out } = await streamed(split(doc, 1000), BRIDGE, 1024);
    expect(out.toString()).toBe(`<body></body>${'z'.repeat(4096)}${BRIDGE}`);
    const empty = await streamed([], BRIDGE, 1024);
    expect(empty.out.toString()).toBe(BRIDGE);
  });

  it('passes invalid UTF-8 through unchanged', async () => {
    const doc = Buffer.concat([Buffer.from('<body>'), Buffer.from([0xff, 0xfe, 0x80]), Buffer.from('</body>')]);
    const { out } = await streamed(split(doc, 2), 'B', 8);
    expect([...out]).toEqual([...Buffer.from('<body>'), 0xff, 0xfe, 0x80, ...Buffer.from('B</body>')]);
  });

  it('holds back no more than the tail window plus one chunk: the body flows while it streams', async () => {
    const doc = Buffer.concat([Buffer.alloc(1024 * 1024, 'a'), Buffer.from('</body>')]);
    const { out, pushes } = await streamed(split(doc, 16 * 1024), BRIDGE, 64 * 1024);
    expect(out.length).toBe(doc.length + BRIDGE.length);
    // Everything but the last window left before the end; no push is larger than window + chunk.
    expect(pushes.length).toBeGreaterThan(50);
    expect(Math.max(...pushes)).toBeLessThanOrEqual(64 * 1024 + 16 * 1024 + BRIDGE.length);
  });
});
