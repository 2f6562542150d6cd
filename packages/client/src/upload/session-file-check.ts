import fs from 'node:fs';
import { parseSessionJson, sessionFileRefusalText, sessionIdOfFile } from '@svc/protocol';

/** Bytes read first: enough to tell binary data and non-JSON text from a session file without reading it all. */
const HEAD_BYTES = 64 * 1024;

function headOf(file: string): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    return buf.subarray(0, fs.readSync(fd, buf, 0, HEAD_BYTES, 0));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Why `file` is not a session file the portal takes, in words that follow "it" (the protocol's
 * rule, session-file/identify.ts), or null when it is one. `svc upload` used
 * to send any file and let the portal say "session_json is not valid JSON", so a wrong file left
 * the host. A file over `maxBytes` (the upload limit) is only looked at in its first 64 KiB:
 * when those could start a JSON object the answer is null, and the upload's size check refuses
 * the file before anything is sent.
 */
export function sessionFileProblem(file: string, maxBytes: number): string | null {
  const size = fs.statSync(file).size;
  const head = headOf(file);
  // NUL never occurs in UTF-8 JSON text: an image, an archive, a UTF-16 file.
  if (head.includes(0)) return 'is binary data, not JSON text';
  const start = head
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (start === '' && size <= HEAD_BYTES) return 'is empty';
  if (size > maxBytes) {
    const first = start.codePointAt(0);
    return first === undefined || start.startsWith('{')
      ? null
      : `is not a JSON object (it starts with ${JSON.stringify(String.fromCodePoint(first))})`;
  }
  const parsed = parseSessionJson(fs.readFileSync(file, 'utf8'));
  const read = 'doc' in parsed ? sessionIdOfFile(parsed.doc) : parsed;
  return 'reason' in read ? sessionFileRefusalText(read) : null;
}
