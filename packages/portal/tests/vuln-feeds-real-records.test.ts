import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type DebianPackageRecord, debianPackages } from '../src/vuln-feeds/debian.ts';
import { nvdRecords } from '../src/vuln-feeds/nvd.ts';
import { chunkedStream, feedFixture, kevCatalog, nvdFeed, nvdFixtureFeed } from '@svc/test-support/vuln-feeds';

/**
 * Real NVD records and a real cut of the Debian security tracker's JSON through the feed
 * readers (test-support/fixtures/vuln-feeds/SOURCES.md): what the index keeps of each, as
 * NISTIR 7696 reads a CPE's version.
 */

const chunked = (bytes: Buffer | string, size = 97) => chunkedStream(bytes, size);

async function rangesOf(id: string) {
  const out = [];
  for await (const r of nvdRecords(chunked(await nvdFixtureFeed([id])), `${id}.json`)) out.push(r);
  expect(out.map((r) => r.id)).toEqual([id]);
  return out[0]?.ranges;
}

async function debian(text: string | Buffer, size?: number): Promise<DebianPackageRecord[]> {
  const out = [];
  for await (const p of debianPackages(chunked(text, size), 'debian.json')) out.push(p);
  return out;
}

const none = { start_including: null, start_excluding: null, end_including: null, end_excluding: null };

describe('real NVD records', () => {
  it('CVE-1999-0236: a CPE version "-" (not applicable) is no range of Apache httpd', async () => {
    expect(await rangesOf('CVE-1999-0236')).toEqual([]);
  });

  it('CVE-1999-0524: every CPE version is "-": no range at all', async () => {
    expect(await rangesOf('CVE-1999-0524')).toEqual([]);
  });

  it('CVE-2022-35934: TensorFlow release candidates keep their update, before the 2.10 release', async () => {
    expect(await rangesOf('CVE-2022-35934')).toEqual([
      { product: 'a:google:tensorflow', version: null, ...none, start_including: '2.7.0', end_excluding: '2.7.2' },
      { product: 'a:google:tensorflow', version: null, ...none, start_including: '2.8.0', end_excluding: '2.8.1' },
      { product: 'a:google:tensorflow', version: null, ...none, start_including: '2.9.0', end_excluding: '2.9.1' },
      { product: 'a:google:tensorflow', version: '2.10~rc0', ...none },
      { product: 'a:google:tensorflow', version: '2.10~rc1', ...none },
      { product: 'a:google:tensorflow', version: '2.10~rc2', ...none },
      { product: 'a:google:tensorflow', version: '2.10~rc3', ...none },
    ]);
  });

  it('CVE-2023-38408: OpenSSH up to 9.3, 9.3 with no update ("-") and 9.3p1; Fedora as a product of its own', async () => {
    expect(await rangesOf('CVE-2023-38408')).toEqual([
      { product: 'a:openbsd:openssh', version: null, ...none, end_excluding: '9.3' },
      { product: 'a:openbsd:openssh', version: '9.3', ...none },
      { product: 'a:openbsd:openssh', version: '9.3p1', ...none },
      { product: 'o:fedoraproject:fedora', version: '37', ...none },
      { product: 'o:fedoraproject:fedora', version: '38', ...none },
    ]);
  });

  it('writes a bound with a pre-release as the index orders it', async () => {
    const feed = nvdFeed([
      {
        id: 'CVE-2024-0003',
        cpes: [
          { criteria: 'cpe:2.3:a:acme:widget:*:*:*:*:*:*:*:*', startIncluding: '2.0.0-beta.1', endExcluding: '2.0.0' },
        ],
      },
    ]);
    const out = [];
    for await (const r of nvdRecords(chunked(feed), 'nvd.json')) out.push(r);
    expect(out[0]?.ranges).toEqual([
      { product: 'a:acme:widget', version: null, ...none, start_including: '2.0.0~beta1', end_excluding: '2.0.0' },
    ]);
  });
});

describe("the Debian security tracker's JSON", () => {
  it('keeps each resolved and open statement per release, the suites, and skips what says nothing', async () => {
    const packages = await debian(await feedFixture('debian/vunnel-debian.json'));
    expect(packages.map((p) => p.package)).toEqual([
      'prototypejs',
      'txt2man',
      'backupninja',
      'chromium',
      'chromium-browser',
    ]);
    const chromium = packages.find((p) => p.package === 'chromium');
    expect(chromium).toEqual({
      package: 'chromium',
      releases: {
        bookworm: ['98.0.4758.102-1'],
        bullseye: ['90.0.4430.212-1', '98.0.4758.102-1~deb11u1'],
        buster: ['89.0.4389.114-1~deb10u1', '90.0.4430.212-1~deb10u1'],
        sid: ['99.0.4844.51-1'],
        stretch: ['73.0.3683.75-1~deb9u1'],
      },
      statements: [
        { cve_id: 'CVE-2022-0456', release: 'bookworm', fixed_version: '98.0.4758.80-1', unimportant: false },
        { cve_id: 'CVE-2022-0456', release: 'bullseye', fixed_version: '98.0.4758.80-1~deb11u1', unimportant: false },
        { cve_id: 'CVE-2022-0456', release: 'buster', fixed_version: null, unimportant: false },
        { cve_id: 'CVE-2022-0456', release: 'sid', fixed_version: '98.0.4758.80-1', unimportant: false },
        { cve_id: 'CVE-2022-0456', release: 'stretch', fixed_version: null, unimportant: false },
      ],
      descriptions: {},
    });
    // "Fixed in 0": no version of the release was ever affected; rated unimportant.
    expect(packages[0]?.statements.filter((s) => s.cve_id === 'CVE-2007-2383')).toEqual(
      ['stretch', 'jessie', 'buster', 'sid'].map((release) => ({
        cve_id: 'CVE-2007-2383',
        release,
        fixed_version: '0',
        unimportant: true,
      })),
    );
    expect(packages[0]?.descriptions['CVE-2008-7220']).toBe(
      'Unspecified vulnerability in Prototype JavaScript framework (prototypejs) before 1.6.0.2 allows attackers to make "cross-site ajax requests" via unknown vectors.',
    );
    // An entry whose releases are an empty list says nothing.
    expect(packages.at(-1)).toEqual({ package: 'chromium-browser', releases: {}, statements: [], descriptions: {} });
  });

  it('reads the gzip file the same, whatever the chunking; leaves TEMP ids out', async () => {
    const text = await feedFixture('debian/openssh-tracker.json');
    const plain = await debian(text, 5);
    expect(await debian(gzipSync(text), 1024)).toEqual(plain);
    const [openssh] = plain;
    expect(openssh?.releases.bookworm).toEqual(['1:9.2p1-2+deb12u5', '1:9.2p1-2+deb12u6']);
    expect(openssh?.statements.filter((s) => s.release === 'bookworm')).toEqual([
      { cve_id: 'CVE-2007-2768', release: 'bookworm', fixed_version: null, unimportant: true },
      { cve_id: 'CVE-2023-38408', release: 'bookworm', fixed_version: '1:9.2p1-2+deb12u1', unimportant: false },
      { cve_id: 'CVE-2023-48795', release: 'bookworm', fixed_version: '1:9.2p1-2+deb12u2', unimportant: false },
      { cve_id: 'CVE-2024-6387', release: 'bookworm', fixed_version: '1:9.2p1-2+deb12u3', unimportant: false },
      { cve_id: 'CVE-2025-26465', release: 'bookworm', fixed_version: '1:9.2p1-2+deb12u5', unimportant: false },
    ]);
  });

  it.each([
    [
      'an NVD feed',
      nvdFeed([{ id: 'CVE-2024-0001' }]),
      `debian.json: "resultsPerPage" is not a package's CVE entries: not the Debian security tracker's JSON (https://security-tracker.debian.org/tracker/data/json)`,
    ],
    [
      'a KEV catalogue',
      kevCatalog([]),
      `debian.json: "title" is not a package's CVE entries: not the Debian security tracker's JSON (https://security-tracker.debian.org/tracker/data/json)`,
    ],
    [
      'an entry without releases',
      '{"openssh":{"CVE-2023-38408":{"description":"x"}}}',
      `debian.json: "openssh"."CVE-2023-38408" has no "releases": not the Debian security tracker's JSON (https://security-tracker.debian.org/tracker/data/json)`,
    ],
    [
      'an empty object',
      '{}',
      `debian.json: no package in the file: not the Debian security tracker's JSON (https://security-tracker.debian.org/tracker/data/json)`,
    ],
    ['a list', '[]', 'debian.json: not a JSON object'],
    [
      'JSON that breaks off',
      '{"openssh":{"CVE-2023-38408":{"releases":{',
      'debian.json: the JSON breaks off before its end (truncated file?)',
    ],
  ])('refuses %s, naming the file and what is wrong', async (_what, text, message) => {
    await expect(debian(text)).rejects.toThrow(message);
  });
});
