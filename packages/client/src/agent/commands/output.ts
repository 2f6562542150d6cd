import { MAX_OUTPUT_BYTES } from '@svc/protocol';

/**
 * What a command's stdout and stderr look like in its report (SPEC: ANSI escapes stripped,
 * 10 KB each). The portal caps again on receipt; capping here keeps the journal and the
 * request small and makes the report the same whichever side cuts.
 */

/**
 * ANSI escapes: OSC strings (ESC ] ... BEL or ESC \), CSI sequences with any parameter and
 * intermediate bytes, escapes with intermediate bytes and the other two-byte escapes. NUL
 * goes too: the portal's database cannot store it.
 */
const ANSI =
  /\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b\[[0-?]*[ -/]*[@-~]|\u001b[ -/]+[0-~]|\u001b[@-_]|\u0000/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** ANSI escapes stripped, then at most MAX_OUTPUT_BYTES of UTF-8 (never splitting a character). */
export function reportOutput(text: string): string {
  const clean = stripAnsi(text);
  const bytes = Buffer.from(clean, 'utf8');
  if (bytes.length <= MAX_OUTPUT_BYTES) return clean;
  let end = MAX_OUTPUT_BYTES;
  // Back off while the first byte left out continues a character.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
