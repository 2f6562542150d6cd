import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseForeignFile } from '../src/imports/detect.ts';
import { DEFAULT_MAX_BYTES, ImportError } from '../src/imports/guard.ts';
import { parseNmapXml, scanTimeOf } from '../src/scanner/parse/index.ts';
import { detectFindings } from '../src/scanner/rules/index.ts';
import { tempHome } from '@svc/test-support/cli';
import { FIRST_SCAN, SCAN_END, SCAN_START, withOids, withTemplates } from '@svc/test-support/foreign-items';
import { nessusV2, nucleiJsonl, openvasReport } from '@svc/test-support/foreign-reports';

/** Each parser on files written in its tool's documented format, and the input every parser refuses. */

let dir: string;
beforeAll(async () => {
  dir = await tempHome();
});
afterAll(async () => {
  await fs.promises.rm(dir, { recursive: true, force: true });
});

const write = (name: string, text: string | Buffer) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};
const parse = (
  file: string,
  opts: { format?: 'auto' | 'nmap' | 'nessus' | 'openvas' | 'nuclei'; maxBytes?: number } = {},
) =>
  parseForeignFile(file, {
    format: opts.format ?? 'auto',
    maxBytes: opts.maxBytes ?? DEFAULT_MAX_BYTES,
    now: new Date(0),
  });
const refusal = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ImportError);
  return err as ImportError;
};
const RUN = { start: SCAN_START, end: SCAN_END, items: FIRST_SCAN, target: '192.0.2.10-11' };
const NMAP_FIXTURE = path.join(import.meta.dirname, 'fixtures/nmap/real-lab-odd-ports.xml');

describe('Nessus v2', () => {
  it('turns each ReportItem into a finding with the plugin, severity, CVSS and references', async () => {
    const scan = await parse(write('a.nessus', nessusV2(RUN)));
    expect(scan).toMatchObject({
      format: 'nessus',
      target: '192.0.2.10-11',
      startedAt: SCAN_START,
      finishedAt: SCAN_END,
      records: 2,
    });
    expect(scan.findings).toEqual([
      {
        rule_id: 'nessus:104743',
        title: 'TLS Version 1.0 Protocol Detection',
        severity: 'medium',
        host: '192.0.2.10',
        hostname: 'web.lab.example',
        port: 443,
        protocol: 'tcp',
        service: 'https',
        evidence: 'TLSv1 is enabled and the server supports at least one cipher.',
        description:
          'The remote service encrypts traffic using an older version of TLS.\n\nThe remote service accepts connections encrypted using TLS 1.0.',
        remediation: 'Enable TLS 1.2 and 1.3 and disable TLS 1.0.',
        references: { cwe: ['CWE-327'], urls: ['https://datatracker.ietf.org/doc/html/rfc8996'] },
        cvss: 6.5,
        category: 'weak_crypto',
      },
      {
        rule_id: 'nessus:187315',
        title: 'SSH Terrapin Prefix Truncation Weakness (CVE-2023-48795)',
        severity: 'medium',
        host: '192.0.2.10',
        hostname: 'web.lab.example',
        port: 22,
        protocol: 'tcp',
        service: 'ssh',
        evidence: 'Supports the vulnerable cipher chacha20-poly1305@openssh.com',
        description: 'The remote SSH server is vulnerable to a prefix truncation attack.',
        remediation: 'Upgrade the SSH server.',
        references: { cve: ['CVE-2023-48795'], urls: ['https://terrapin-attack.com/'] },
        cvss: 5.9,
      },
      {
        rule_id: 'nessus:10079',
        title: 'Anonymous FTP Enabled',
        severity: 'high',
        host: '192.0.2.11',
        port: 21,
        protocol: 'tcp',
        service: 'ftp',
        evidence: 'The contents of the remote FTP root are: pub',
        description: 'Anonymous logins are allowed on the remote FTP server.',
        remediation: 'Disable anonymous FTP.',
        references: { cve: ['CVE-1999-0497'] },
        cvss: 7.5,
        category: 'misconfiguration',
      },
      {
        rule_id: 'nessus:19506',
        title: 'Scan Information',
        severity: 'info',
        host: '192.0.2.11',
        protocol: 'tcp',
        evidence: 'Scanner version: 10.8.0',
        description: 'Information about the scan.',
      },
    ]);
    expect(scan.hosts).toEqual([
      { ip: '192.0.2.10', hostname: 'web.lab.example', open_ports: [22, 443] },
      { ip: '192.0.2.11', open_ports: [21] },
    ]);
  });

  it('maps severity 0..4 to info, low, medium, high, critical', async () => {
    const items = (['info', 'low', 'medium', 'high', 'critical'] as const).map((severity, n) => ({
      ...FIRST_SCAN[0]!,
      id: String(1000 + n),
      severity,
    }));
    const scan = await parse(write('sev.nessus', nessusV2({ ...RUN, items })));
    expect(scan.findings.map((f) => [f.rule_id, f.severity])).toEqual([
      ['nessus:1000', 'info'],
      ['nessus:1001', 'low'],
      ['nessus:1002', 'medium'],
      ['nessus:1003', 'high'],
      ['nessus:1004', 'critical'],
    ]);
  });
});

describe('Greenbone/OpenVAS report XML', () => {
  it('turns each result into a finding with the NVT, score, QoD and refs', async () => {
    const scan = await parse(write('a.xml', openvasReport({ ...RUN, items: withOids(FIRST_SCAN), version: '22.4' })));
    expect(scan).toMatchObject({ format: 'openvas', version: '22.4', target: '192.0.2.10-11', records: 4 });
    expect(scan.startedAt).toEqual(SCAN_START);
    expect(scan.finishedAt).toEqual(SCAN_END);
    expect(scan.findings[2]).toEqual({
      rule_id: 'openvas:1.3.6.1.4.1.25623.1.0.10079',
      title: 'Anonymous FTP Enabled',
      severity: 'high',
      host: '192.0.2.11',
      port: 21,
      protocol: 'tcp',
      evidence: 'The contents of the remote FTP root are: pub',
      description: 'Anonymous logins are allowed on the remote FTP server.',
      remediation: 'Disable anonymous FTP.',
      references: { cve: ['CVE-1999-0497'] },
      cvss: 7.5,
      qod: 80,
      category: 'misconfiguration',
    });
    expect(scan.findings.map((f) => [f.rule_id, f.severity, f.port ?? null, f.cvss ?? null])).toEqual([
      ['openvas:1.3.6.1.4.1.25623.1.0.104743', 'medium', 443, 6.5],
      ['openvas:1.3.6.1.4.1.25623.1.0.187315', 'medium', 22, 5.9],
      ['openvas:1.3.6.1.4.1.25623.1.0.10079', 'high', 21, 7.5],
      ['openvas:1.3.6.1.4.1.25623.1.0.19506', 'info', null, null],
    ]);
    expect(scan.hosts).toEqual([
      { ip: '192.0.2.10', hostname: 'web.lab.example', os_guess: 'Linux Kernel', open_ports: [22, 443] },
      { ip: '192.0.2.11', os_guess: 'Linux Kernel', open_ports: [21] },
    ]);
  });

  it('leaves out false positives (severity -1)', async () => {
    const xml = openvasReport({ ...RUN, items: withOids([FIRST_SCAN[0]!]) })
      .replace(/<severity>6\.5<\/severity>/, '<severity>-1.0</severity>')
      .replace(/<threat>Medium<\/threat>/, '<threat>False Positive</threat>');
    const scan = await parse(write('fp.xml', xml));
    expect(scan.records).toBe(1);
    expect(scan.findings).toEqual([]);
  });
});

describe('Nuclei JSON lines', () => {
  it('turns each line into a finding; template, classification and place', async () => {
    const scan = await parse(write('a.jsonl', nucleiJsonl({ ...RUN, items: withTemplates(FIRST_SCAN) })));
    expect(scan).toMatchObject({ format: 'nuclei', records: 4 });
    expect(scan.target).toBeUndefined();
    expect(scan.startedAt).toEqual(SCAN_START);
    expect(scan.finishedAt).toEqual(new Date(SCAN_START.getTime() + 3000));
    expect(scan.findings[0]).toEqual({
      rule_id: 'nuclei:svc-test-104743',
      title: 'TLS Version 1.0 Protocol Detection',
      severity: 'medium',
      host: '192.0.2.10',
      hostname: 'web.lab.example',
      port: 443,
      protocol: 'tcp',
      service: 'https',
      evidence: 'https://web.lab.example:443/\nTLSv1 is enabled and the server supports at least one cipher.',
      description: 'The remote service accepts connections encrypted using TLS 1.0.',
      remediation: 'Enable TLS 1.2 and 1.3 and disable TLS 1.0.',
      references: { cwe: ['CWE-327'], urls: ['https://datatracker.ietf.org/doc/html/rfc8996'] },
      cvss: 6.5,
      category: 'weak_crypto',
    });
    expect(scan.findings.map((f) => [f.rule_id, f.host, f.port ?? null, f.references?.cve ?? null])).toEqual([
      ['nuclei:svc-test-104743', '192.0.2.10', 443, null],
      ['nuclei:svc-test-187315', '192.0.2.10', 22, ['CVE-2023-48795']],
      ['nuclei:svc-test-10079', '192.0.2.11', 21, ['CVE-1999-0497']],
      ['nuclei:svc-test-19506', '192.0.2.11', null, null],
    ]);
  });

  it('one template matched at two URLs of one service is one finding listing both', async () => {
    const one = JSON.parse(nucleiJsonl({ ...RUN, items: withTemplates([FIRST_SCAN[0]!]) })) as Record<string, unknown>;
    const two = { ...one, 'matched-at': 'https://web.lab.example:443/admin/' };
    const scan = await parse(write('dup.jsonl', `${JSON.stringify(one)}\n${JSON.stringify(two)}\n`));
    expect(scan.findings).toHaveLength(1);
    expect(scan.findings[0]!.evidence).toBe(
      'https://web.lab.example:443/\nTLSv1 is enabled and the server supports at least one cipher.\nhttps://web.lab.example:443/admin/\nTLSv1 is enabled and the server supports at least one cipher.',
    );
  });
});

describe('nmap XML', () => {
  it('gives the findings and hosts svc scan gives for the same run', async () => {
    const xml = fs.readFileSync(NMAP_FIXTURE, 'utf8');
    const run = parseNmapXml(xml);
    const scan = await parse(NMAP_FIXTURE);
    expect(scan.findings).toEqual(detectFindings(run.hosts, { scanTime: scanTimeOf(run.info)! }));
    expect(scan.findings.length).toBeGreaterThan(5);
    expect(scan).toMatchObject({ format: 'nmap', version: '7.93', target: '127.0.0.1', records: 1 });
    expect(scan.hosts).toEqual([{ ip: '127.0.0.1', open_ports: [2222, 4433, 4434, 9876] }]);
  });
});

describe('coverage: what each file says its scan looked at (docs/cli/import.md, "Coverage")', () => {
  const block = (format: string, hosts: string[], ports: Record<string, string>) => ({
    hosts,
    ports,
    profile: format,
    tools: [format],
    source: `import:${format}`,
  });

  it('nmap: the hosts nmap reports up and the ports of <scaninfo>, as svc scan reads them', async () => {
    expect((await parse(NMAP_FIXTURE)).coverage).toEqual(block('nmap', ['127.0.0.1'], { tcp: '2222,4433-4434,9876' }));
  });

  it("Nessus: every ReportHost; the policy's port_range when it states one, with the items' ports", async () => {
    const withRange = (value: string) =>
      nessusV2(RUN).replace(
        '<preference><name>TARGET</name>',
        `<preference><name>port_range</name><value>${value}</value></preference>\n<preference><name>TARGET</name>`,
      );
    expect((await parse(write('items.nessus', nessusV2(RUN)))).coverage).toEqual(
      block('nessus', ['192.0.2.10', '192.0.2.11'], { tcp: '21-22,443' }),
    );
    expect((await parse(write('range.nessus', withRange('1-1024,T:8443,U:53,161')))).coverage.ports).toEqual({
      tcp: '1-1024,8443',
      udp: '53,161',
    });
    expect((await parse(write('all.nessus', withRange('all')))).coverage.ports).toEqual({ tcp: '1-65535' });
    // `default` is Nessus's own list, which the file does not spell out: the items' ports only.
    expect((await parse(write('default.nessus', withRange('default')))).coverage.ports).toEqual({ tcp: '21-22,443' });
  });

  it("Greenbone: the report's hosts; the target's port list when the report carries it, else the ports of the results", async () => {
    const xml = openvasReport({ ...RUN, items: withOids(FIRST_SCAN) });
    expect((await parse(write('seen.xml', xml))).coverage).toEqual(
      block('openvas', ['192.0.2.10', '192.0.2.11'], { tcp: '21-22,443' }),
    );
    const ranged = xml.replace(
      '<trash>0</trash>',
      '<trash>0</trash><port_list id="p"><name>All TCP and Nmap top 100 UDP</name><port_ranges>' +
        '<port_range id="a"><start>1</start><end>65535</end><type>tcp</type></port_range>' +
        '<port_range id="b"><start>161</start><end>161</end><type>udp</type></port_range></port_ranges></port_list>',
    );
    expect((await parse(write('ranged.xml', ranged))).coverage.ports).toEqual({ tcp: '1-65535', udp: '161' });
  });

  it('Nuclei: only the hosts and ports its results name', async () => {
    expect((await parse(write('c.jsonl', nucleiJsonl({ ...RUN, items: withTemplates(FIRST_SCAN) })))).coverage).toEqual(
      block('nuclei', ['192.0.2.10', '192.0.2.11'], { tcp: '21-22,443' }),
    );
  });
});

describe('refused input', () => {
  const nmapHead = '<?xml version="1.0"?>\n';
  it('an internal subset declaring entities (billion laughs)', async () => {
    const lol = `${nmapHead}<!DOCTYPE nmaprun [\n<!ENTITY lol "lol">\n<!ENTITY lol2 "&lol;&lol;&lol;&lol;">\n]>\n<nmaprun>&lol2;</nmaprun>\n`;
    for (const format of ['auto', 'nmap'] as const) {
      const file = write('lol.xml', lol);
      const err = await refusal(parse(file, { format }));
      expect(err.kind).toBe('refused');
      expect(
        err.message.startsWith(`${file}: Refused: the XML declares a document type with entities or an external DTD`),
      ).toBe(true);
    }
  });

  it('an external entity (XXE) in Nessus and Greenbone files', async () => {
    const xxe = (root: string) =>
      `<?xml version="1.0"?>\n<!DOCTYPE ${root} SYSTEM "file:///etc/passwd">\n<${root}>&xxe;</${root}>\n`;
    for (const [root, format] of [
      ['NessusClientData_v2', 'nessus'],
      ['report', 'openvas'],
    ] as const) {
      const file = write(`xxe-${format}.xml`, xxe(root));
      const err = await refusal(parse(file, { format }));
      expect(err.message.startsWith(`${file}: Refused: the XML declares a document type`)).toBe(true);
    }
  });

  it('a bare <!DOCTYPE nmaprun>, which nmap writes, is accepted', async () => {
    expect(fs.readFileSync(NMAP_FIXTURE, 'utf8')).toContain('<!DOCTYPE nmaprun>');
    await expect(parse(NMAP_FIXTURE)).resolves.toMatchObject({ format: 'nmap' });
  });

  it('a file over the size limit, before reading it', async () => {
    const big = path.join(dir, 'big.nessus');
    // A sparse file: over 512 MiB on paper, no disk used.
    fs.writeFileSync(big, '<NessusClientData_v2>');
    fs.truncateSync(big, DEFAULT_MAX_BYTES + 1);
    const err = await refusal(parse(big));
    expect(err.message).toBe(`${big} is 536870913 bytes, over the import limit of 512 MiB (--max-size)`);
    const small = await refusal(parse(write('b.nessus', nessusV2(RUN)), { maxBytes: 1024 }));
    expect(small.message).toMatch(/ is \d+ bytes, over the import limit of 0\.001 MiB \(--max-size\)$/);
  });

  it('nesting deeper than 64 elements', async () => {
    const deep = `<NessusClientData_v2>${'<a>'.repeat(100)}${'</a>'.repeat(100)}</NessusClientData_v2>`;
    const err = await refusal(parse(write('deep.nessus', deep)));
    expect(err.message).toBe(`${path.join(dir, 'deep.nessus')}: Refused: the XML nests elements deeper than 64 levels`);
    const nmapDeep = `<nmaprun>${'<a>'.repeat(100)}${'</a>'.repeat(100)}</nmaprun>`;
    expect((await refusal(parse(write('deep-nmap.xml', nmapDeep)))).message).toBe(
      `${path.join(dir, 'deep-nmap.xml')}: Refused: the XML nests elements deeper than 64 levels`,
    );
  });

  it('a file cut short', async () => {
    for (const [name, text] of [
      ['cut.nessus', nessusV2(RUN)],
      ['cut-gvm.xml', openvasReport({ ...RUN, items: withOids(FIRST_SCAN) })],
      ['cut-nmap.xml', fs.readFileSync(NMAP_FIXTURE, 'utf8')],
    ] as const) {
      const file = write(name, text.slice(0, Math.floor(text.length / 2)));
      expect((await refusal(parse(file))).message).toMatch(
        new RegExp(`^${file} is cut short: it ends (inside|before) `),
      );
    }
    const jsonl = nucleiJsonl({ ...RUN, items: withTemplates(FIRST_SCAN) });
    const cut = write('cut.jsonl', jsonl.slice(0, jsonl.length - 40));
    expect((await refusal(parse(cut))).message).toBe(
      `${cut}: Not Nuclei JSON lines: line 4 is not JSON (a truncated or other file)`,
    );
  });

  it('a JSON line over the limit', async () => {
    const file = path.join(dir, 'long.jsonl');
    const first = nucleiJsonl({ ...RUN, items: withTemplates([FIRST_SCAN[0]!]) });
    fs.writeFileSync(file, first);
    fs.appendFileSync(file, Buffer.alloc(17 * 1024 * 1024, 0x61));
    expect((await refusal(parse(file))).message).toBe(
      `${file}: Refused: line 2 is longer than 16 MiB (not Nuclei JSON lines)`,
    );
  });

  it('the wrong format: unknown content (exit 2 kind) and a format given that does not match', async () => {
    const session = write('session_results.json', '{\n  "metadata": {"session_id": "x"}\n}\n');
    const unknown = await refusal(parse(session));
    expect(unknown.kind).toBe('usage');
    expect(unknown.message).toBe(
      `${session} is not a format svc imports: it starts with JSON without a Nuclei template-id; expected nmap XML, Nessus .nessus (v1 or v2), a Greenbone/OpenVAS report (XML, or the CSV results export), or Nuclei output (JSON lines, the -json-export array, or an empty file from a run without results) (--format nmap|nessus|openvas|nuclei)`,
    );
    const nessus = write('given.nessus', nessusV2(RUN));
    expect((await refusal(parse(nessus, { format: 'openvas' }))).message).toBe(
      `${nessus}: Not a Greenbone/OpenVAS report file: the root element is <NessusClientData_v2>, expected <report> or <get_reports_response>`,
    );
    expect((await refusal(parse(nessus, { format: 'nmap' }))).message).toBe(
      `${nessus}: Not an nmap XML file: the root element is <NessusClientData_v2>, expected <nmaprun>`,
    );
    expect((await refusal(parse(nessus, { format: 'nuclei' }))).message).toBe(
      `${nessus}: Not Nuclei JSON lines: line 1 is not JSON (a truncated or other file)`,
    );
    const other = write('other.jsonl', '{"host":"a"}\n');
    expect((await refusal(parse(other, { format: 'nuclei' }))).message).toBe(
      `${other}: Not a Nuclei result: no template-id (line 1)`,
    );
  });
});
