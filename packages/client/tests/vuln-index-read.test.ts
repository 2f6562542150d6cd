import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseVulnIndexBytes, readVulnIndexFile } from '../src/scanner/versions/read-vuln-index.ts';
import { vulnIndex } from '../../../test-support/vuln-index.ts';

/** The chunked reader of an index file reads what JSON.parse reads, whatever the read size. */

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-vuln-read-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let n = 0;
const write = (text: string) => {
  const file = path.join(dir, `index-${n++}.json`);
  fs.writeFileSync(file, text);
  return file;
};

const INDEX = vulnIndex([
  {
    id: 'CVE-2024-6387',
    summary: 'Quotes " and \\\\ backslashes, braces { } [ ], commas, colons: and “curly” ünïcödé ✓ 𝄞.',
    kev: '2025-01-10',
    epss: 0.42,
    affects: { 'a:openbsd:openssh': [{ start_including: '8.5p1', end_excluding: '9.8p1' }], 'a:x:y': [{}] },
  },
  { id: 'CVE-2023-38408', cvss: null, affects: { 'a:openbsd:openssh': [{ end_excluding: '9.3p2' }] } },
]);

describe('readVulnIndexFile and parseVulnIndexBytes', () => {
  it.each([1, 2, 3, 7, 64, 1 << 20])('reads an index as JSON.parse does, %i bytes at a time', (chunk) => {
    for (const text of [JSON.stringify(INDEX), JSON.stringify(INDEX, null, 2)]) {
      expect(readVulnIndexFile(write(text), chunk)).toEqual(JSON.parse(text));
      expect(parseVulnIndexBytes(Buffer.from(text), chunk)).toEqual(JSON.parse(text));
    }
  });

  it('reads empty containers, scalars after containers and nested values', () => {
    const text = ' {"cves": [], "products": {}, "a": {"b": [1, {"c": "}"}]}, "format": 1 , "x": null} \n';
    expect(readVulnIndexFile(write(text), 5)).toEqual(JSON.parse(text));
  });

  it('refuses what is not one JSON object', () => {
    expect(() => readVulnIndexFile(write('[1, 2]'))).toThrow('the file is not a JSON object');
    expect(() => readVulnIndexFile(write('{"cves": [1, 2]'))).toThrow('the file ends inside the top-level object');
    expect(() => readVulnIndexFile(write('{"a": 1} x'))).toThrow('unexpected text after the top-level object');
    expect(() => readVulnIndexFile(write('{"cves": [1, 2,, 3]}'))).toThrow(SyntaxError);
  });
});
