import { PassThrough } from 'node:stream';

/** Hostile terminal text for the printable-output tests of svc and svcd, and a stream that records what was written. */

export const OSC_TITLE = '\u001b]0;pwned\u0007';
export const OSC_52 = '\u001b]52;c;ZXZpbA==\u001b\\';
export const CSI = '\u001b[2J\u001b[1;1H';
export const C1 = '\u009b2K\u009d0;t\u009c';
export const HOSTILE = `${OSC_TITLE}${OSC_52}${CSI}${C1}\u0007\u0008\u007f`;
export const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

export function capture(tty: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY: tty });
  let text = '';
  stream.on('data', (b: Buffer) => {
    text += b.toString();
  });
  return { stream, text: () => text };
}
