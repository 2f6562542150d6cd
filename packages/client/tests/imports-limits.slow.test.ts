import { describe, expect, it } from 'vitest';
import { inItem, nessus, nucleiResult, useImportFiles } from './helpers/import-files.ts';

/**
 * The import limits as shipped that take a large file to reach (docs/cli/import.md "Limits"):
 * 300,000 elements and 16 Mi characters in one item, 50,000 findings, a JSON element or CSV row
 * over 16 MiB. The rules that small files reach are imports-limits.test.ts.
 */

const { parse, refusal } = useImportFiles();

describe('what the XML parser holds is bounded', () => {
  it('refuses an item of more than 300,000 elements; elements outside any item are read and dropped', async () => {
    expect(await refusal(inItem('<e/>'.repeat(300_000)))).toBe(
      'Refused: one <ReportItem> holds more than 300000 elements',
    );
    // The ReportItem itself is the 300,000th: accepted.
    expect((await parse(inItem('<e/>'.repeat(299_999)))).findings).toHaveLength(1);
    const outside = nessus([{ name: '192.0.2.10' }]).replace(
      '<Report name="r">',
      `<Report name="r">${'<e/>'.repeat(300_001)}`,
    );
    expect((await parse(outside)).findings).toHaveLength(1);
  });

  it('refuses an item holding more than 16 Mi characters, however they are split', async () => {
    const body = `<cve>${'C'.repeat(60_000)}</cve>`.repeat(300);
    expect(await refusal(inItem(body))).toBe('Refused: one <ReportItem> holds more than 16777216 characters of text');
  });

  it('keeps 50,000 findings and refuses the 50,001st (the pipeline of a real import is imports-memory.slow.test.ts)', async () => {
    const lines = (count: number) =>
      Array.from(
        { length: count },
        (_, i) => `{"template-id":"t${i}","host":"https://192.0.2.10","ip":"192.0.2.10","info":{"name":"n"}}\n`,
      ).join('');
    expect((await parse(lines(50_000))).findings).toHaveLength(50_000);
    expect(await refusal(lines(50_001))).toBe(
      'Refused: the file holds more than 50000 findings, more than one import keeps (split the scan)',
    );
  });
});

describe('the JSON array and the CSV export are bounded as lines are', () => {
  it('refuses a Nuclei array element over 16 MiB', async () => {
    const long = `[${nucleiResult(0)},${nucleiResult(1, `,"x":"${'a'.repeat(17 * 1024 * 1024)}"`)}]`;
    expect(await refusal(long)).toBe('Refused: element 2 is longer than 16 MiB (not a Nuclei JSON array)');
  });

  it('refuses a Greenbone CSV row over 16 MiB', async () => {
    const header = 'IP,Hostname,Port,Port Protocol,CVSS,Severity,NVT Name,NVT OID\n';
    expect(await refusal(`${header}192.0.2.1,,,,5,Medium,"${'x'.repeat(17 * 1024 * 1024)}",1.2\n`)).toMatch(
      /^Malformed Greenbone CSV: Max Record Size: record exceed the maximum number of tolerated bytes of 16777216/,
    );
  });
});
