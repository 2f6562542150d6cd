/**
 * Text from elsewhere (the portal's answers and errors, a child's output) made safe for a
 * terminal or a log line: no escape sequence can set the title, write the clipboard (OSC 52),
 * move the cursor or hide text. docs/security.md#scan-targets-the-clients-output-and-plain-http.
 */

/**
 * Whole escape sequences, 7-bit and 8-bit: OSC strings (ESC ] or 0x9d, up to BEL, ESC \ or
 * 0x9c), DCS/SOS/PM/APC strings alike, CSI sequences (ESC [ or 0x9b) with any parameter and
 * intermediate bytes, escapes with intermediate bytes and the other two-byte escapes. Removed
 * whole so that no "]0;title" is left behind.
 */
const ESCAPE_SEQUENCE =
  /(?:\u001b[\]PX^_]|[\u0090\u0098\u009d-\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]?|\u001b[ -/]+[0-~]?|\u001b[@-~]?/g;
/** Every C0 control but tab and newline, DEL and every C1 control. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const LINE_BREAKS = /[\t\n\r\u2028\u2029]+/g;
/** What JSON.stringify leaves raw although a terminal acts on it. */
const JSON_RAW_CONTROL = /[\u007f-\u009f\u2028\u2029]/g;

/** Escape sequences and NUL removed, everything else kept (a command's report: it is shown as text later). */
export function stripEscapes(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(/\u0000/g, '');
}

/**
 * Text fit for a terminal: escape sequences and every other control removed. `multiline`
 * (the default) keeps newlines and tabs; a single line (a URL, an error message) gets a
 * space for each run of them and loses surrounding blanks.
 */
export function printable(text: string, opts: { multiline?: boolean } = {}): string {
  const clean = text.replace(ESCAPE_SEQUENCE, '');
  if (opts.multiline === false) return clean.replace(LINE_BREAKS, ' ').replace(CONTROL, '').trim();
  return clean.replace(/\r\n/g, '\n').replace(CONTROL, '');
}

/** JSON whose text holds no raw control: JSON.stringify escapes C0 itself, DEL and C1 are escaped here. */
export function printableJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, null, indent).replace(
    JSON_RAW_CONTROL,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A color sequence as picocolors writes it (ESC [ <digits> m). */
const SGR = /\u001b\[\d{1,3}m/g;

/**
 * Text for one of our own output streams. With colors on, the SGR color sequences our own
 * color functions put in survive and everything else is made printable; with colors off
 * nothing survives. Remote strings are made printable where they come in as well (PortalError),
 * so on a color terminal at most a color change could come from outside.
 */
export function terminalText(text: string, colors: boolean): string {
  if (!colors) return printable(text);
  let out = '';
  let last = 0;
  for (const m of text.matchAll(SGR)) {
    out += printable(text.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  return out + printable(text.slice(last));
}
