/**
 * The consultation contact a stored report names, for the share page's consultation button.
 * The report's frame may open no window (no `allow-popups`: a pop-up's
 * address could carry what a viewer typed into a fake form), so the share page opens
 * `/share/consultation?token=`, and the portal reads the link from the report as stored:
 * nothing the report's scripts compute at view time can reach that address.
 *
 * Which link, as the bridge chose it before: `#scheduleBtn`'s own `data-href`, `href` or
 * `data-contact` (the project's reports use the last), else the first https: or mailto:
 * link inside `#consultation-section`, else the report's first mailto: link (the footer's).
 * Only https: and mailto: links count.
 *
 * The markup is read with a small linear tag scanner, not a full HTML parser: it only has to
 * find start tags, their attributes and the end of one element, and skips comments and the
 * text of script and style elements (a report's script strings hold markup). Its time is
 * linear in the report's length whatever the report holds.
 */

interface Tag {
  name: string;
  end: boolean;
  attrs: Map<string, string>;
}

/** Elements whose content is text up to their own end tag. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'noscript']);
const SPACE = /\s/;
const NAME_START = /[a-zA-Z]/;
const NAME = /[a-zA-Z0-9-]/;
const MAX_LINK = 2048;

const ENTITIES: Record<string, string> = { amp: '&', quot: '"', apos: "'", lt: '<', gt: '>' };

/** The character references an attribute value commonly holds (`&amp;` in a query). */
function decode(value: string): string {
  return value.replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] !== '#') return ENTITIES[ref.toLowerCase()] ?? whole;
    const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** The start and end tags of `html`, in order. */
function* tags(html: string): Generator<Tag> {
  const n = html.length;
  let i = 0;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt === -1) return;
    if (html.startsWith('<!--', lt)) {
      const close = html.indexOf('-->', lt + 4);
      if (close === -1) return;
      i = close + 3;
      continue;
    }
    let j = lt + 1;
    const end = html[j] === '/';
    if (end) j++;
    if (!NAME_START.test(html[j] ?? '')) {
      i = lt + 1;
      continue;
    }
    const nameStart = j;
    while (j < n && NAME.test(html[j] as string)) j++;
    const name = html.slice(nameStart, j).toLowerCase();
    const attrs = new Map<string, string>();
    for (;;) {
      while (j < n && (SPACE.test(html[j] as string) || html[j] === '/')) j++;
      if (j >= n) return;
      if (html[j] === '>') {
        j++;
        break;
      }
      const attrStart = j;
      while (j < n && !SPACE.test(html[j] as string) && !'/>='.includes(html[j] as string)) j++;
      if (j === attrStart) j++; // a stray '=': skip it
      const attr = html.slice(attrStart, j).toLowerCase();
      while (j < n && SPACE.test(html[j] as string)) j++;
      let value = '';
      if (html[j] === '=') {
        j++;
        while (j < n && SPACE.test(html[j] as string)) j++;
        const quote = html[j];
        if (quote === '"' || quote === "'") {
          const close = html.indexOf(quote, j + 1);
          if (close === -1) return;
          value = html.slice(j + 1, close);
          j = close + 1;
        } else {
          const valueStart = j;
          while (j < n && !SPACE.test(html[j] as string) && html[j] !== '>') j++;
          value = html.slice(valueStart, j);
        }
      }
      if (!attrs.has(attr)) attrs.set(attr, decode(value));
    }
    yield { name, end, attrs };
    i = j;
    if (!end && RAW_TEXT.has(name)) {
      const close = new RegExp(`</${name}`, 'gi');
      close.lastIndex = j;
      const m = close.exec(html);
      if (m === null) return;
      i = m.index;
    }
  }
}

/** An https: or mailto: link, trimmed; anything else is no link. */
function usable(value: string | undefined): string | null {
  const v = value?.trim();
  if (v === undefined || v.length > MAX_LINK || !/^(https:|mailto:)/i.test(v)) return null;
  try {
    new URL(v);
  } catch {
    return null;
  }
  return v;
}

/** The consultation link `html` names (see above), or null. */
export function consultationLink(html: string): string | null {
  let sectionTag: string | null = null;
  let depth = 0;
  let sectionSeen = false;
  let inSection: string | null = null;
  let firstMailto: string | null = null;
  for (const tag of tags(html)) {
    if (sectionTag !== null && tag.name === sectionTag) {
      depth += tag.end ? -1 : 1;
      if (depth === 0) sectionTag = null;
    }
    if (tag.end) continue;
    const id = tag.attrs.get('id');
    if (id === 'consultation-section' && !sectionSeen) {
      sectionSeen = true;
      sectionTag = tag.name;
      depth = 1;
    }
    if (id === 'scheduleBtn') {
      const own = ['data-href', 'href', 'data-contact'].map((a) => usable(tag.attrs.get(a))).find((v) => v !== null);
      if (own !== undefined) return own;
    }
    if (tag.name !== 'a') continue;
    const href = usable(tag.attrs.get('href'));
    if (href === null) continue;
    if (sectionTag !== null) inSection ??= href;
    if (/^mailto:/i.test(href)) firstMailto ??= href;
  }
  return inSection ?? firstMailto;
}
