import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import {
  NmapXmlStream,
  type NmapHost,
  type NmapProgress,
  parseNmapStream,
  parseNmapXml,
  scanTimeOf,
  toHostInfos,
} from '../src/scanner/parse/index.ts';
import { fixture, fixtureText, HAND, hostOf, REAL } from './scanner-fixtures.ts';

describe('parseNmapXml on real nmap 7.93 output', () => {
  const run = fixture(REAL);

  it('reads the run header, scaninfo and runstats', () => {
    expect(run.info.version).toBe('7.93');
    expect(run.info.args).toMatch(/^nmap -n -sT -sV -p 9876,4433,4434,2222 --script http-title,/);
    expect(run.info.start).toBeTypeOf('number');
    expect(run.info.scaninfo).toEqual([
      { type: 'connect', protocol: 'tcp', numservices: 4, services: '2222,4433-4434,9876' },
    ]);
    expect(run.info.finished?.exit).toBe('success');
    expect(run.info.finished?.elapsed).toBeGreaterThan(0);
    expect(run.info.hosts).toEqual({ up: 1, down: 0, total: 1 });
    expect(run.info.complete).toBe(true);
    expect(scanTimeOf(run.info)?.getTime()).toBe((run.info.finished?.time ?? 0) * 1000);
  });

  it('reads hosts, ports, services with CPEs, and script trees', () => {
    expect(run.hosts).toHaveLength(1);
    const host = hostOf(run, '127.0.0.1');
    expect(host.status).toEqual({ state: 'up', reason: 'localhost-response' });
    expect(host.addresses).toEqual([{ addr: '127.0.0.1', addrtype: 'ipv4', vendor: undefined }]);
    expect(host.ports.map((p) => [p.protocol, p.portid, p.state, p.reason])).toEqual([
      ['tcp', 2222, 'open', 'syn-ack'],
      ['tcp', 4433, 'open', 'syn-ack'],
      ['tcp', 4434, 'open', 'syn-ack'],
      ['tcp', 9876, 'open', 'syn-ack'],
    ]);
    expect(host.ports[0]?.service).toEqual({
      name: 'ssh',
      product: 'OpenSSH',
      version: '7.4',
      extrainfo: 'protocol 2.0',
      tunnel: undefined,
      method: 'probed',
      conf: 10,
      ostype: undefined,
      cpes: ['cpe:/a:openbsd:openssh:7.4'],
    });
    expect(host.ports[1]?.service).toMatchObject({ name: 'vop', tunnel: 'ssl', method: 'table', conf: 3, cpes: [] });
    const cert = host.ports[1]?.scripts.find((s) => s.id === 'ssl-cert');
    expect(cert?.output.split('\n')[0]).toBe('Subject: commonName=expired.test');
    expect(cert?.children.slice(0, 2)).toEqual([
      { kind: 'table', key: 'subject', children: [{ kind: 'elem', key: 'commonName', value: 'expired.test' }] },
      { kind: 'table', key: 'issuer', children: [{ kind: 'elem', key: 'commonName', value: 'expired.test' }] },
    ]);
    // Character references in attributes and text are decoded (`&#xa;`, `&#45;`).
    const pem = cert?.children.find((n) => n.key === 'pem');
    expect(pem?.kind === 'elem' && pem.value.startsWith('-----BEGIN CERTIFICATE-----\nMII')).toBe(true);
    const ciphers = host.ports[1]?.scripts.find((s) => s.id === 'ssl-enum-ciphers');
    expect(ciphers?.children.map((n) => n.key)).toEqual(['TLSv1.0', 'least strength']);
    const http = host.ports[3];
    expect(http?.scripts.map((s) => s.id)).toEqual([
      'http-security-headers',
      'http-server-header',
      'http-title',
      'http-headers',
    ]);
    // http-security-headers with nothing to report keeps an empty output (nmap #2704).
    expect(http?.scripts[0]).toEqual({ id: 'http-security-headers', output: '', children: [] });
    expect(http?.scripts[1]?.children).toEqual([{ kind: 'elem', value: 'SimpleHTTP/0.6 Python/3.11.7' }]);
  });
});

describe('parseNmapXml on the hand-written lab', () => {
  const run = fixture(HAND);

  it('reads MAC addresses, host names, OS guesses, UDP ports and host scripts', () => {
    const weak = hostOf(run, '10.99.0.5');
    expect(weak.addresses).toEqual([
      { addr: '10.99.0.5', addrtype: 'ipv4', vendor: undefined },
      { addr: '02:42:0A:63:00:05', addrtype: 'mac', vendor: 'Private' },
    ]);
    expect(weak.hostnames).toEqual([
      { name: 'weak.lab.test', type: 'user' },
      { name: 'weak-ptr.lab.test', type: 'PTR' },
    ]);
    expect(weak.os).toEqual([
      { name: 'Linux 4.15 - 5.8', accuracy: 96 },
      { name: 'Linux 5.0 - 5.5', accuracy: 98 },
    ]);
    expect(weak.starttime).toBe(1795600001);
    expect(weak.endtime).toBe(1795600090);
    expect(weak.ports.find((p) => p.protocol === 'udp')?.portid).toBe(1661);
    expect(weak.hostscripts.map((s) => s.id)).toEqual(['smb-protocols', 'smb-security-mode', 'smb2-security-mode']);
    expect(weak.hostscripts[2]?.children).toEqual([
      { kind: 'table', key: '311', children: [{ kind: 'elem', value: 'Message signing enabled but not required' }] },
    ]);
    expect(run.info.scaninfo.map((s) => s.protocol)).toEqual(['tcp', 'udp']);
    expect(run.hosts.map((h) => h.status.state)).toEqual(['up', 'up', 'down']);
  });

  it('converts to the pipeline topology: hosts up, best OS guess, open ports sorted, user-given name first', () => {
    expect(toHostInfos(run.hosts)).toEqual([
      {
        ip: '10.99.0.5',
        hostname: 'weak.lab.test',
        os_guess: 'Linux 5.0 - 5.5',
        open_ports: [1661, 2121, 2122, 2200, 2323, 4445, 5120, 5140, 8081, 9443, 13306, 15432, 16379, 21211, 27018],
      },
      { ip: '10.99.0.6', hostname: 'hardened.lab.test', open_ports: [2200, 8080, 8443] },
    ]);
  });
});

describe('NmapXmlStream', () => {
  it('gives the same hosts whatever the chunking, even with a UTF-8 character split across chunks', async () => {
    const text = fixtureText(HAND).replace('Lab Test CA', 'Lab Test CA \u00e9\u4e2d');
    const whole = parseNmapXml(text);
    const bytes = Buffer.from(text, 'utf8');
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 7) yield bytes.subarray(i, i + 7);
    }
    const hosts: NmapHost[] = [];
    const info = await parseNmapStream(chunks(), { onHost: (h) => hosts.push(h) });
    expect(hosts).toEqual(whole.hosts);
    expect(info).toEqual(whole.info);
    expect(JSON.stringify(hosts)).toContain('Lab Test CA \u00e9\u4e2d');
  });

  it('hands over each host as soon as it closes, before the document ends', () => {
    const seen: string[] = [];
    const stream = new NmapXmlStream({ onHost: (h) => seen.push(h.addresses[0]?.addr ?? '') });
    const text = fixtureText(HAND);
    const cut = text.indexOf('<host starttime="1795600001" endtime="1795600095">');
    stream.write(text.slice(0, cut));
    expect(seen).toEqual(['10.99.0.5']);
    stream.write(text.slice(cut));
    expect(stream.end().complete).toBe(true);
    expect(seen).toEqual(['10.99.0.5', '10.99.0.6', '10.99.0.7']);
  });

  it('streams a large scan from a generator without holding the document', async () => {
    const count = 20_000;
    async function* nmapOutput() {
      yield '<?xml version="1.0"?><nmaprun scanner="nmap" version="7.93" start="1795600000">';
      for (let i = 0; i < count; i++) {
        const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
        yield `<host><status state="up"/><address addr="${ip}" addrtype="ipv4"/><ports><port protocol="tcp" portid="22"><state state="open"/><service name="ssh" product="OpenSSH" version="9.2p1"><cpe>cpe:/a:openbsd:openssh:9.2p1</cpe></service></port></ports></host>`;
      }
      yield '<runstats><finished time="1795600100" elapsed="100" exit="success"/></runstats></nmaprun>';
    }
    let seen = 0;
    let last = '';
    const info = await parseNmapStream(nmapOutput(), {
      onHost: (h) => {
        seen += 1;
        last = h.addresses[0]?.addr ?? '';
      },
    });
    expect(seen).toBe(count);
    expect(last).toBe('10.0.78.31');
    expect(info).toMatchObject({ complete: true, finished: { elapsed: 100 } });
  });

  it('reports taskprogress lines as they arrive', () => {
    const progress: NmapProgress[] = [];
    const stream = new NmapXmlStream({ onHost: () => {}, onProgress: (p) => progress.push(p) });
    stream.write(fixtureText(HAND));
    stream.end();
    expect(progress).toEqual([{ task: 'Service scan', percent: 33.33, remaining: 12, etc: 1795600042 }]);
  });

  it('marks a run cut short as incomplete and keeps the hosts that closed', () => {
    const run = parseNmapXml(fixtureText('truncated.xml'));
    expect(run.info.complete).toBe(false);
    expect(run.info.finished).toBeUndefined();
    expect(run.hosts.map((h) => h.addresses[0]?.addr)).toEqual(['10.99.0.1']);
  });

  it('throws on malformed XML instead of guessing', () => {
    expect(() => parseNmapXml('<nmaprun><host><status state="up"/></ports></host></nmaprun>')).toThrow();
  });
});
