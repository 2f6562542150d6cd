import { describe, expect, it } from 'vitest';
import { TLS10 } from '@svc/test-support/foreign-items';
import { nucleiJsonl, openvasReport, xmlEscape } from '@svc/test-support/foreign-reports';
import { CUT, inItem, item, nessus, nucleiResult as result, START, useImportFiles } from './helpers/import-files.ts';

/**
 * One cut rule for every text an import keeps (attributes, JSON
 * strings, lists), the parser's bounds on names, attributes and items, and the host check
 * (docs/cli/import.md "Limits", "Hosts and host names"). Memory, measured on a real `svc
 * import` process, is imports-memory.slow.test.ts; the limits that take a large file to reach,
 * imports-limits.slow.test.ts.
 */

const NOTE = `\n[cut at ${CUT} characters]`;
const { parse, refusal } = useImportFiles();

describe('one cut rule for every kept text', () => {
  it('cuts a Nessus attribute (pluginName) as it cuts element text (plugin_output), and counts both', async () => {
    const scan = await parse(
      nessus([
        {
          name: '192.0.2.10',
          items: [item({ pluginName: 'P'.repeat(CUT * 3) }, `<plugin_output>${'O'.repeat(CUT * 5)}</plugin_output>`)],
        },
      ]),
    );
    expect(scan.findings).toHaveLength(1);
    expect(scan.findings[0]!.title).toBe(`${'P'.repeat(CUT)}${NOTE}`);
    expect(scan.findings[0]!.evidence).toBe(`${'O'.repeat(CUT)}${NOTE}`);
    expect(scan.checks).toEqual({ invalid_hosts: 0, invalid_hostnames: 0, cut_fields: 2 });
  });

  it('a field exactly at the cut is kept whole; leading and trailing white space does not count', async () => {
    const scan = await parse(
      nessus([
        {
          name: '192.0.2.10',
          items: [item({ pluginName: 'T'.repeat(CUT) }, `<plugin_output>\n  ${'O'.repeat(CUT)}  \n</plugin_output>`)],
        },
      ]),
    );
    expect(scan.findings[0]!.title).toBe('T'.repeat(CUT));
    expect(scan.findings[0]!.evidence).toBe('O'.repeat(CUT));
    expect(scan.checks.cut_fields).toBe(0);
  });

  it("cuts Nuclei's info.name, and a list (info.reference) as one field", async () => {
    const urls = Array.from({ length: 2000 }, (_, i) => `https://ref.example/${'r'.repeat(60)}/${i}`);
    const line = JSON.parse(nucleiJsonl({ start: START, end: START, items: [{ ...TLS10, id: 'tls10' }] })) as {
      info: Record<string, unknown>;
    };
    line.info['name'] = 'N'.repeat(CUT * 4);
    line.info['reference'] = urls;
    const scan = await parse(`${JSON.stringify(line)}\n`);
    const f = scan.findings[0]!;
    expect(f.title).toBe(`${'N'.repeat(CUT)}${NOTE}`);
    const kept = f.references?.urls ?? [];
    expect(kept).toEqual(urls.slice(0, kept.length));
    expect(kept.join('').length).toBeLessThanOrEqual(CUT);
    expect(kept.join('').length + urls[kept.length]!.length).toBeGreaterThan(CUT);
    expect(scan.checks.cut_fields).toBe(2);
  });

  it("cuts Greenbone's NVT name and the target the file names", async () => {
    const xml = openvasReport({
      start: START,
      end: START,
      items: [{ ...TLS10, id: '1.3.6.1.4.1.25623.1.0.1' }],
      target: 'lab',
    })
      .replaceAll('TLS Version 1.0 Protocol Detection', 'G'.repeat(CUT + 1))
      .replace('<name>lab</name>', `<name>${'L'.repeat(CUT * 2)}</name>`);
    const scan = await parse(xml);
    expect(scan.findings[0]!.title).toBe(`${'G'.repeat(CUT)}${NOTE}`);
    expect(scan.target).toBe(`${'L'.repeat(CUT)}${NOTE}`);
  });

  it('cuts an nmap script output, an attribute, before the detection rules see it', async () => {
    const xml = `<?xml version="1.0"?><nmaprun scanner="nmap" args="nmap 192.0.2.10" start="1768298400" version="7.94"><scaninfo type="syn" protocol="tcp" numservices="1" services="21"/>
<host><status state="up" reason="syn-ack"/><address addr="192.0.2.10" addrtype="ipv4"/><ports>
<port protocol="tcp" portid="21"><state state="open" reason="syn-ack"/><service name="ftp" product="vsftpd" version="2.3.4"/>
<script id="ftp-anon" output="Anonymous FTP login allowed (FTP code 230)&#xa;${'x'.repeat(CUT * 3)}"/></port></ports></host>
<runstats><finished time="1768298500"/><hosts up="1" down="0" total="1"/></runstats></nmaprun>`;
    const scan = await parse(xml);
    expect(scan.findings.length).toBeGreaterThan(0);
    for (const f of scan.findings)
      for (const v of Object.values(f))
        if (typeof v === 'string') expect(v.length).toBeLessThanOrEqual(CUT + NOTE.length);
  });
});

describe('what the XML parser holds is bounded', () => {
  it('refuses names over 1,024 characters and elements with over 1,024 attributes', async () => {
    expect(await refusal(inItem(`<${'n'.repeat(5000)}/>`))).toBe(
      'Refused: the XML has a name longer than 1024 characters',
    );
    const attrs = Array.from({ length: 20_000 }, (_, i) => `a${i}="1"`).join(' ');
    expect(await refusal(inItem(`<e ${attrs}/>`))).toBe('Refused: an XML element has more than 1024 attributes');
  });

  it('refuses a document type declaration longer than the cut, whose end it could not judge', async () => {
    const xml = `<?xml version="1.0"?>\n<!DOCTYPE NessusClientData_v2${' '.repeat(CUT * 2)} SYSTEM "http://x.example/d.dtd">\n${nessus([{ name: '192.0.2.10' }]).replace(/^<\?xml[^>]*>\n/, '')}`;
    expect(await refusal(xml, 'nessus')).toBe(
      `Refused: the XML's document type declaration is longer than ${CUT} characters`,
    );
  });

  it('recognises Nuclei lines whose first line is longer than the 64 KiB the format is read from', async () => {
    const line = JSON.parse(nucleiJsonl({ start: START, end: START, items: [{ ...TLS10, id: 'tls10' }] })) as {
      info: Record<string, unknown>;
    };
    line.info['description'] = 'D'.repeat(200_000);
    const scan = await parse(`${JSON.stringify(line)}\n`);
    expect(scan.format).toBe('nuclei');
    expect(scan.findings[0]!.description).toBe(`${'D'.repeat(CUT)}${NOTE}`);
  });
});

describe('the JSON array and the CSV export are bounded as lines are', () => {
  it('refuses an element of too many values, a cut-short array and text after it', async () => {
    const values = `[${result(0, `,"x":[${'{},'.repeat(100_001)}{}]`)}]`;
    expect(await refusal(values)).toBe('Refused: element 1 holds more than 100000 JSON values (not a Nuclei result)');
    expect(await refusal(`[${result(0)},${result(1).slice(0, 30)}`)).toBe(
      'The Nuclei JSON array is cut short: it ends inside element 2, before its closing ]',
    );
    expect(await refusal(`[${result(0)}] {}`)).toBe('Not a Nuclei JSON array: text follows the closing ]');
    expect(await refusal(`[${result(0)}, 3]`)).toBe(
      'Not a Nuclei JSON array: element 2 is not a JSON object (nuclei -json-export writes an array of results)',
    );
  });

  it('a Greenbone CSV: a header of too many columns is refused', async () => {
    const header = 'IP,Hostname,Port,Port Protocol,CVSS,Severity,NVT Name,NVT OID';
    const wide = `${header},${Array.from({ length: 300 }, (_, i) => `c${i}`).join(',')}\n`;
    expect(await refusal(wide)).toBe('Refused: the CSV header has 308 columns, more than 256');
  });

  it('a Nuclei array: split into elements whatever the chunks, strings with brackets and escapes kept', async () => {
    const tricky = ',"matcher-name":"a ] } \\" [ {"';
    const text = `[\n${Array.from({ length: 3000 }, (_, i) => `  ${result(i, i === 7 ? tricky : '')}`).join(',\n')}\n]\n`;
    const scan = await parse(text);
    expect(scan).toMatchObject({ format: 'nuclei', variant: 'JSON array', records: 3000 });
    expect(scan.findings[7]!.evidence).toBe('matcher a ] } " [ {');
  });
});

describe('hosts and host names: an address or an RFC 1123 name, else left out or dropped', () => {
  // XML 1.0 cannot carry control characters at all (the parser refuses the file): JSON can.
  const HOSTILE = [
    '<script>alert(1)</script>',
    'two words',
    'tab\there',
    `${'a'.repeat(300)}.example`,
    '10.0.0.1/24',
    '-oX',
  ];
  const JSON_HOSTILE = [...HOSTILE, 'ctl\u0001x', 'esc\u001b[31m'];

  it('Nessus: a finding whose host is hostile is left out; a hostile host name is dropped; both counted', async () => {
    const scan = await parse(
      nessus([
        { name: '192.0.2.10', tags: { 'host-ip': '192.0.2.10', 'host-fqdn': 'web.lab.example' } },
        ...HOSTILE.map((h) => ({ name: h, tags: { 'host-ip': h } })),
        { name: '192.0.2.11', tags: { 'host-ip': '192.0.2.11', 'host-fqdn': '<img src=x onerror=alert(1)>' } },
        { name: 'db-01.lab.example', tags: { 'netbios-name': 'DB 01' } },
        { name: '2001:db8::7' },
      ]),
    );
    expect(scan.findings.map((f) => [f.host, f.hostname])).toEqual([
      ['192.0.2.10', 'web.lab.example'],
      ['192.0.2.11', undefined],
      ['db-01.lab.example', undefined],
      ['2001:db8::7', undefined],
    ]);
    expect(scan.hosts.map((h) => h.ip).sort()).toEqual([
      '192.0.2.10',
      '192.0.2.11',
      '2001:db8::7',
      'db-01.lab.example',
    ]);
    expect(scan.coverage.hosts).toEqual(['192.0.2.10', '192.0.2.11', '2001:db8::7', 'db-01.lab.example']);
    // Each hostile host: its host record and its finding; each hostile name: the host record and the finding.
    expect(scan.checks).toEqual({ invalid_hosts: HOSTILE.length * 2, invalid_hostnames: 4, cut_fields: 0 });
  });

  it('Nuclei and Greenbone: the same rule', async () => {
    const items = JSON_HOSTILE.map((h, i) => ({ ...TLS10, id: `t${i}`, host: h, hostname: undefined }));
    const nuclei = await parse(nucleiJsonl({ start: START, end: START, items: [{ ...TLS10, id: 'ok' }, ...items] }));
    expect(nuclei.findings.map((f) => f.host)).toEqual(['192.0.2.10']);
    expect(nuclei.checks.invalid_hosts).toBe(JSON_HOSTILE.length);
    // The Greenbone writer puts the host in as it is: escape it here.
    const oids = [
      { ...TLS10, id: '1.3.6.1.4.1.25623.1.0.1' },
      ...HOSTILE.map((h, k) => ({
        ...TLS10,
        hostname: undefined,
        host: xmlEscape(h),
        id: `1.3.6.1.4.1.25623.1.0.${k + 2}`,
      })),
    ];
    const gvm = await parse(openvasReport({ start: START, end: START, items: oids }));
    expect(gvm.findings.map((f) => f.host)).toEqual(['192.0.2.10']);
    expect(gvm.hosts.map((h) => h.ip)).toEqual(['192.0.2.10']);
  });

  it('nmap: a hostile address leaves its findings and host out; a hostile host name is dropped', async () => {
    const host = (addr: string, name: string) =>
      `<host><status state="up" reason="syn-ack"/><address addr="${xmlEscape(addr)}" addrtype="ipv4"/><hostnames><hostname name="${xmlEscape(name)}" type="user"/></hostnames><ports>
<port protocol="tcp" portid="23"><state state="open" reason="syn-ack"/><service name="telnet"/></port></ports></host>`;
    const xml = `<?xml version="1.0"?><nmaprun scanner="nmap" args="nmap 192.0.2.0/24" start="1768298400" version="7.94"><scaninfo type="syn" protocol="tcp" numservices="1" services="23"/>
${host('192.0.2.10', 'telnet.lab.example')}${host('<script>', 'x.example')}${host('192.0.2.11', 'bad name')}
<runstats><finished time="1768298500"/><hosts up="3" down="0" total="3"/></runstats></nmaprun>`;
    const scan = await parse(xml);
    expect([...new Set(scan.findings.map((f) => `${f.host} ${f.hostname ?? '-'}`))]).toEqual([
      '192.0.2.10 telnet.lab.example',
      '192.0.2.11 -',
    ]);
    expect(scan.hosts.map((h) => [h.ip, h.hostname])).toEqual([
      ['192.0.2.10', 'telnet.lab.example'],
      ['192.0.2.11', undefined],
    ]);
    expect(scan.coverage.hosts).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(scan.checks.invalid_hosts).toBeGreaterThanOrEqual(2);
    expect(scan.checks.invalid_hostnames).toBeGreaterThanOrEqual(2);
  });
});
