import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { debianPackage } from '../src/cve-match/debian.ts';
import { parseVulnIndexBytes, readVulnIndexFile, VULN_INDEX_RAW_MEMBERS } from '../src/cve-match/read-vuln-index.ts';
import { vulnIndex } from '@svc/test-support/vuln-index';

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

  it('reads a large index (runs of members longer than a batch, cut by reads anywhere) as JSON.parse does', () => {
    const many = vulnIndex(
      Array.from({ length: 3000 }, (_, i) => ({
        id: `CVE-2024-${String(10000 + i)}`,
        summary: `Summary ${i} with "quotes", \\ and [brackets] {braces}.`.repeat(1 + (i % 4)),
        affects: { [`a:v:p${i % 50}`]: [{ end_excluding: `${i}.0` }] },
      })),
    );
    const text = JSON.stringify(many);
    expect(text.length).toBeGreaterThan(300_000);
    for (const chunk of [4093, 65_537, 1 << 20]) {
      expect(readVulnIndexFile(write(text), chunk)).toEqual(many);
      expect(parseVulnIndexBytes(Buffer.from(text), chunk)).toEqual(many);
    }
  });

  it('reads empty containers, scalars after containers and nested values', () => {
    const text = ' {"cves": [], "products": {}, "a": {"b": [1, {"c": "}"}]}, "format": 1 , "x": null} \n';
    expect(readVulnIndexFile(write(text), 5)).toEqual(JSON.parse(text));
  });

  it('keeps the Debian packages as JSON text, each read whole on first use as JSON.parse reads it', () => {
    const openssh = {
      releases: { bookworm: ['1:9.2p1-2+deb12u5'] },
      cves: [{ cve: 1, fixed: { bookworm: '1:9.2p1-2+deb12u1', 'sid "x"': null }, unimportant: ['sid'] }],
    };
    // Written as text: an object literal would take a __proto__ key for its prototype.
    const debian = `{"openssh":${JSON.stringify(openssh)},"__proto__":{"releases":{},"cves":[]},"broken":7}`;
    const { debian: _none, ...rest } = INDEX;
    const text = `${JSON.stringify(rest).slice(0, -1)},"debian":${debian}}`;
    for (const chunk of [3, 1 << 20]) {
      const read = readVulnIndexFile(write(text), chunk, VULN_INDEX_RAW_MEMBERS) as { debian: Record<string, unknown> };
      expect(Object.keys(read.debian)).toEqual(['openssh', '__proto__', 'broken']);
      expect(typeof read.debian['openssh']).toBe('string');
      const index = JSON.parse(text) as { debian: Record<string, unknown> };
      expect(debianPackage(read.debian as never, 'openssh')).toEqual(index.debian['openssh']);
      expect(debianPackage(read.debian as never, '__proto__')).toEqual({ releases: {}, cves: [] });
      expect(debianPackage(read.debian as never, 'broken')).toBeNull();
      expect(debianPackage(read.debian as never, 'constructor')).toBeNull();
      expect(parseVulnIndexBytes(Buffer.from(text), chunk, VULN_INDEX_RAW_MEMBERS)).toEqual(read);
    }
  });

  it('refuses what is not one JSON object', () => {
    expect(() => readVulnIndexFile(write('[1, 2]'))).toThrow('the file is not a JSON object');
    expect(() => readVulnIndexFile(write('{"cves": [1, 2]'))).toThrow('the file ends inside the top-level object');
    expect(() => readVulnIndexFile(write('{"a": 1} x'))).toThrow('unexpected text after the top-level object');
    expect(() => readVulnIndexFile(write('{"cves": [1, 2,, 3]}'))).toThrow(SyntaxError);
  });
});
