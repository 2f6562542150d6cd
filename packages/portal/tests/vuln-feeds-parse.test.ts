import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { epssScores, type EpssMeta } from '../src/vuln-feeds/epss.ts';
import { readKevCatalog } from '../src/vuln-feeds/kev.ts';
import { nvdRecords } from '../src/vuln-feeds/nvd.ts';
import { chunkedStream, epssCsv, kevCatalog, nvdFeed } from '@svc/test-support/vuln-feeds';

/** The feed parsers (docs/vuln-feeds.md) on files in each publisher's format, plain and gzip, split into small chunks. */

const chunked = (bytes: Buffer | string, size = 7) => chunkedStream(bytes, size);

async function nvd(bytes: Buffer | string, size?: number) {
  const out = [];
  for await (const r of nvdRecords(chunked(bytes, size), 'nvd.json')) out.push(r);
  return out;
}

async function epss(bytes: Buffer | string) {
  const meta: EpssMeta = { model_version: null, score_date: null };
  const rows = [];
  for await (const s of epssScores(chunked(bytes, 11), 'epss.csv', meta)) rows.push(s);
  return { meta, rows };
}

const FEED = nvdFeed([
  {
    id: 'CVE-2023-38408',
    cvss: 9.8,
    cvssVersion: '3.1',
    description:
      'The PKCS#11 feature in ssh-agent in OpenSSH before 9.3p2 has an insufficiently trustworthy search path.',
    cpes: [
      { criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', endExcluding: '9.3' },
      { criteria: 'cpe:2.3:a:openbsd:openssh:9.3:-:*:*:*:*:*:*' },
      { criteria: 'cpe:2.3:a:openbsd:openssh:9.3:p1:*:*:*:*:*:*' },
      { criteria: 'cpe:2.3:a:openbsd:openssh:9.3:p1:*:*:*:*:*:*' },
    ],
    platforms: ['cpe:2.3:o:linux:linux_kernel:-:*:*:*:*:*:*:*'],
  },
  {
    id: 'CVE-2021-41773',
    cvss: 7.5,
    cvssVersion: '4.0',
    description: `${'Path traversal in Apache HTTP Server 2.4.49. '.repeat(10)}`,
    cpes: [{ criteria: 'cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*' }],
  },
  {
    id: 'CVE-2008-0166',
    cvss: 7.8,
    cvssVersion: '2.0',
    cpes: [
      { criteria: 'cpe:2.3:a:debian:openssl:*:*:*:*:*:*:*:*', startIncluding: '0.9.8c-1', endExcluding: '0.9.8g-9' },
      { criteria: 'cpe:2.3:a:*:openssl:*:*:*:*:*:*:*:*', endIncluding: '1.0' },
    ],
  },
  { id: 'CVE-2024-99999', description: 'Awaiting analysis.' },
]);

describe('NVD CVE JSON 2.0', () => {
  it('keeps each record: newest CVSS, English summary cut to 280, vulnerable cpeMatch only, CPE versions joined', async () => {
    const records = await nvd(FEED);
    expect(records).toEqual([
      {
        id: 'CVE-2023-38408',
        cvss: 9.8,
        cvss_version: '3.1',
        summary:
          'The PKCS#11 feature in ssh-agent in OpenSSH before 9.3p2 has an insufficiently trustworthy search path.',
        ranges: [
          {
            product: 'a:openbsd:openssh',
            version: null,
            start_including: null,
            start_excluding: null,
            end_including: null,
            end_excluding: '9.3',
          },
          {
            product: 'a:openbsd:openssh',
            version: '9.3',
            start_including: null,
            start_excluding: null,
            end_including: null,
            end_excluding: null,
          },
          {
            product: 'a:openbsd:openssh',
            version: '9.3p1',
            start_including: null,
            start_excluding: null,
            end_including: null,
            end_excluding: null,
          },
        ],
      },
      {
        id: 'CVE-2021-41773',
        cvss: 7.5,
        cvss_version: '4.0',
        summary: `${'Path traversal in Apache HTTP Server 2.4.49. '.repeat(10).trim().slice(0, 279)}…`,
        ranges: [
          {
            product: 'a:apache:http_server',
            version: '2.4.49',
            start_including: null,
            start_excluding: null,
            end_including: null,
            end_excluding: null,
          },
        ],
      },
      {
        id: 'CVE-2008-0166',
        cvss: 7.8,
        cvss_version: '2.0',
        summary: 'Description of CVE-2008-0166.',
        ranges: [
          {
            product: 'a:debian:openssl',
            version: null,
            start_including: '0.9.8c-1',
            start_excluding: null,
            end_including: null,
            end_excluding: '0.9.8g-9',
          },
        ],
      },
      { id: 'CVE-2024-99999', cvss: null, cvss_version: null, summary: 'Awaiting analysis.', ranges: [] },
    ]);
    expect(records[1]?.summary).toHaveLength(280);
  });

  it('reads the gzip file the same, whatever the chunking, leading blanks or byte-order mark', async () => {
    const expected = await nvd(FEED, 4096);
    expect(await nvd(gzipSync(FEED), 3)).toEqual(expected);
    expect(await nvd(`\uFEFF${' '.repeat(100)}\n${FEED}`, 200)).toEqual(expected);
  });

  it.each([
    ['', 'nvd.json: the file is empty'],
    ['<html>Service unavailable</html>', 'nvd.json: not a JSON object'],
    ['{"vulnerabilities":[{"cve":{"id":"CVE-2024-1"', 'nvd.json: the JSON breaks off before its end (truncated file?)'],
    ['{"resultsPerPage":0}', 'nvd.json: no "vulnerabilities" array: not an NVD CVE JSON 2.0 feed'],
    ['{"vulnerabilities":[{"cve":{"id":"GHSA-1234"}}]}', 'nvd.json: vulnerabilities[0]: "GHSA-1234" is not a CVE id'],
    ['{"vulnerabilities":[{"id":"CVE-2024-0001"}]}', 'nvd.json: vulnerabilities[0] has no "cve" object'],
    ['{"format":"NVD_CPE","vulnerabilities":[]}', 'nvd.json: "format" is "NVD_CPE", not "NVD_CVE"'],
    [
      '{"CVE_data_type":"CVE","CVE_data_format":"MITRE","CVE_data_version":"4.0","CVE_Items":[]}',
      'nvd.json: this is the retired NVD 1.1 format; download the JSON 2.0 feeds (docs/vuln-feeds.md)',
    ],
  ])('refuses %j', async (text, message) => {
    await expect(nvd(text)).rejects.toThrow(message);
  });

  it('refuses bytes that are not JSON with the parser reason', async () => {
    await expect(nvd('{"vulnerabilities": [nope]}')).rejects.toThrow(/^nvd\.json: not valid JSON \(/);
  });

  it('refuses a damaged gzip file', async () => {
    const gz = gzipSync(FEED);
    await expect(nvd(Buffer.concat([gz.subarray(0, 40), Buffer.alloc(40, 7)]))).rejects.toThrow(
      /^nvd\.json: not a valid gzip file \(/,
    );
  });
});

describe('CISA KEV catalogue', () => {
  it('keeps the catalogue version and each entry, first entry of a repeated CVE', async () => {
    const text = kevCatalog(
      [
        { cve: 'CVE-2021-41773', dateAdded: '2021-11-03', dueDate: '2021-11-17', ransomware: true },
        { cve: 'CVE-2023-38408', dateAdded: '2024-01-02', description: 'ssh-agent remote code execution.' },
        { cve: 'CVE-2021-41773', dateAdded: '2022-01-01' },
      ],
      { catalogVersion: '2026.11.20' },
    );
    const expected = {
      catalog_version: '2026.11.20',
      entries: [
        {
          cve_id: 'CVE-2021-41773',
          date_added: '2021-11-03',
          due_date: '2021-11-17',
          known_ransomware: true,
          summary: 'Exploited vulnerability CVE-2021-41773.',
        },
        {
          cve_id: 'CVE-2023-38408',
          date_added: '2024-01-02',
          due_date: '2024-01-02',
          known_ransomware: false,
          summary: 'ssh-agent remote code execution.',
        },
      ],
    };
    expect(await readKevCatalog(chunked(text), 'kev.json')).toEqual(expected);
    expect(await readKevCatalog(chunked(gzipSync(text)), 'kev.json')).toEqual(expected);
  });

  it.each([
    ['{"title":"x","count":0}', 'kev.json: no "vulnerabilities" array: not the CISA KEV catalogue'],
    [
      '{"vulnerabilities":[{"cveID":"CVE-2021-1234","dateAdded":"yesterday"}]}',
      'kev.json: vulnerabilities[0] (CVE-2021-1234): dateAdded must be YYYY-MM-DD',
    ],
    [
      '{"vulnerabilities":[{"cveID":"nope","dateAdded":"2021-01-01"}]}',
      'kev.json: vulnerabilities[0]: cveID "nope" is not a CVE id',
    ],
    ['[1,2,3]', 'kev.json: not a JSON object'],
  ])('refuses %j', async (text, message) => {
    await expect(readKevCatalog(chunked(text), 'kev.json')).rejects.toThrow(message);
  });
});

describe('FIRST EPSS CSV', () => {
  const CSV = epssCsv(
    [
      { cve: 'CVE-2021-41773', epss: 0.94379, percentile: 0.99969 },
      { cve: 'CVE-2023-38408', epss: 0.0123, percentile: 0.85 },
    ],
    { modelVersion: 'v2025.03.14', scoreDate: '2026-11-26T00:00:00Z' },
  );

  it('reads the comment line, the header and each row, plain or gzip, CRLF or not', async () => {
    const expected = {
      meta: { model_version: 'v2025.03.14', score_date: '2026-11-26T00:00:00Z' },
      rows: [
        { cve_id: 'CVE-2021-41773', epss: 0.94379, percentile: 0.99969 },
        { cve_id: 'CVE-2023-38408', epss: 0.0123, percentile: 0.85 },
      ],
    };
    expect(await epss(CSV)).toEqual(expected);
    expect(await epss(gzipSync(CSV))).toEqual(expected);
    expect(await epss(CSV.replace(/\n/g, '\r\n'))).toEqual(expected);
  });

  it.each([
    ['cve,score\nCVE-2021-1234,0.1\n', 'epss.csv: line 1: expected the header "cve,epss,percentile"; not an EPSS CSV'],
    ['#model_version:v1,score_date:2026-01-01\n', 'epss.csv: no "cve,epss,percentile" header: not an EPSS CSV'],
    [
      'cve,epss,percentile\nCVE-2021-1234,1.5,0.2\n',
      'epss.csv: line 2: expected "CVE-YYYY-NNNN,<0..1>,<0..1>", got "CVE-2021-1234,1.5,0.2"',
    ],
    [
      'cve,epss,percentile\nCVE-2021-1234,abc,0.2\n',
      'epss.csv: line 2: expected "CVE-YYYY-NNNN,<0..1>,<0..1>", got "CVE-2021-1234,abc,0.2"',
    ],
    [`cve,epss,percentile\n${'x'.repeat(5000)}`, 'epss.csv: a line longer than 4096 characters: not an EPSS CSV'],
  ])('refuses %j', async (text, message) => {
    await expect(epss(text)).rejects.toThrow(message);
  });
});
