import { CSV_COLUMNS, csvCell, neutraliseFormula, toCsv } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';
import { F1_CVES, F1_CWES, multiReferenceSession, SSH_FP, smallSession, TELNET_FP } from './exports-fixture.ts';

const URL_ = 'https://portal.example/collect/?session=20260301_120000&client_id=acme';

describe('CSV export', () => {
  it('is exactly the documented columns, one CRLF line per finding, quoted per RFC 4180', () => {
    const expected = [
      CSV_COLUMNS.join(','),
      `${SSH_FP},20260301_120000,f-001,ssh-weak-kex,"Weak SSH key exchange, ""diffie-hellman-group1""",high,7.4,true,2024-05-01,0.9123,0.99,10.0.0.5,gw.example,22,tcp,ssh,CVE-2015-4000,CWE-327,in_progress,20260201_120000,,,,,"The server offers a key exchange,\nbroken since 2015.",Disable group1 key exchange.,kex: diffie-hellman-group1-sha1,https://weakdh.org/,${URL_},,`,
      `${TELNET_FP},20260301_120000,f-002,telnet-open,Telnet service,medium,,,,,,10.0.0.7,,23,tcp,telnet,,,persistent,20260101_120000,accepted,"Legacy PLC, isolated VLAN",ciso@example.com,2099-12-31,,"'=cmd|"" /C calc""!A0",,,${URL_},,`,
      `afd72b3290ccac401ab7dccef6129824326303c1f07933339fb69057898ab6e9,20260301_120000,f-003,icmp-timestamp,ICMP timestamp reply,low,,,,,,10.0.0.9,,,,,,,,,,,,,,,,,${URL_},,`,
      `d6b43eadc4e4651b3807c4717f9f3e1ea8af890992f9125667052a5151068548,20260301_120000,f-004,Scan incomplete,Scan incomplete,info,,,,,,,,,,,,,,,,,,,,,,,${URL_},,`,
      '',
    ].join('\r\n');
    expect(toCsv(smallSession(), { sessionUrl: URL_ })).toBe(expected);
  });

  it('documents its column order (a new column only ever goes at the end)', () => {
    expect(CSV_COLUMNS.slice(0, 6)).toEqual([
      'fingerprint',
      'session_id',
      'finding_id',
      'rule_id',
      'title',
      'severity',
    ]);
    expect(CSV_COLUMNS).toHaveLength(31);
    expect(CSV_COLUMNS.slice(28)).toEqual(['session_url', 'disposition', 'disposition_reason']);
  });

  it('neutralises every formula trigger and leaves other text alone', () => {
    for (const lead of ['=', '+', '-', '@', '\t', '\r'])
      expect(neutraliseFormula(`${lead}SUM(A1)`)).toBe(`'${lead}SUM(A1)`);
    expect(neutraliseFormula('10.0.0.5')).toBe('10.0.0.5');
    expect(csvCell('@evil')).toBe("'@evil");
    expect(csvCell('\r=1+1')).toBe(`"'\r=1+1"`);
    expect(csvCell('-2,3')).toBe(`"'-2,3"`);
    expect(csvCell(null)).toBe('');
    expect(csvCell(false)).toBe('false');
  });

  it('writes only the header for a session without findings, and tolerates findings of the wrong shape', () => {
    expect(toCsv({ metadata: { session_id: '20260301_120000' } })).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
    const lines = toCsv({
      session_id: '20260301_120000',
      findings: [42, null, { title: 'x', port: 'x', cvss: 99 }],
    }).split('\r\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe(`${lines[1]?.slice(0, 64)},20260301_120000,,x,x,,,,,,,,,,,,,,,,,,,,,,,,,,`);
  });

  it('puts every CVE and CWE of a finding in its cells, "; "-joined, in file order, once each', () => {
    const rows = toCsv(multiReferenceSession())
      .split('\r\n')
      .slice(1, -1)
      .map((line) => line.split(','));
    const col = (name: (typeof CSV_COLUMNS)[number]) => CSV_COLUMNS.indexOf(name);
    expect(rows.map((r) => [r[col('cve')], r[col('cwe')]])).toEqual([
      [F1_CVES.join('; '), F1_CWES.join('; ')],
      ['CVE-2017-15906', 'CWE-200'],
      ['', ''],
    ]);
  });
});
