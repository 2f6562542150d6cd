/**
 * An HTML tagged template that escapes every interpolated value unless it is already `Html`
 * (another template's output, or `trusted()` markup the renderer wrote itself). Scan data
 * (titles, evidence, banners, host names) can therefore only ever become text.
 */

export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

/** What a template slot accepts; null, undefined and false render nothing, arrays render each item. */
export type Slot = Html | string | number | boolean | null | undefined | readonly Slot[];

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

const NEEDS_ESCAPE = /[&<>"']/;

/** Text to HTML text or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string) : text;
}

// Plain string concatenation: V8 builds ropes, far cheaper than arrays joined per template
// when a report holds tens of thousands of rows.
function render(slot: Slot): string {
  if (slot === null || slot === undefined || slot === false) return '';
  if (slot instanceof Html) return slot.value;
  if (Array.isArray(slot)) {
    let out = '';
    for (const s of slot as readonly Slot[]) out += render(s);
    return out;
  }
  return escapeHtml(String(slot));
}

export function html(strings: TemplateStringsArray, ...slots: Slot[]): Html {
  let out = strings[0] as string;
  for (let i = 0; i < slots.length; i++) out += render(slots[i] as Slot) + (strings[i + 1] as string);
  return new Html(out);
}

/** Markup written by the renderer itself (CSS, the inline script, SVG built from numbers); never scan data. */
export function trusted(markup: string): Html {
  return new Html(markup);
}
