import { describe, expect, it } from 'vitest';
import { ImportError } from '../src/imports/guard.ts';
import { cveOfTemplate } from '../src/imports/nuclei.ts';
import { coverageWithTargets, parseTargets } from '../src/imports/targets.ts';

/** `svc import --targets` (what a Nuclei run was pointed at) and the coverage it adds; CVE ids in template ids. */

const NUCLEI_FILE = {
  hosts: ['192.0.2.10'],
  ports: { tcp: '443' },
  profile: 'nuclei',
  tools: ['nuclei'],
  source: 'import:nuclei',
};

describe('--targets', () => {
  it('URLs (their port, else 80/443), host:port, [v6]:port and bare hosts', () => {
    expect(
      parseTargets(
        'https://shop.example/app, http://192.0.2.10:8080 ,192.0.2.11:22,[2001:db8::5]:443,db.lab.example,2001:db8::9',
      ),
    ).toEqual([
      { text: 'https://shop.example/app', host: 'shop.example', port: 443 },
      { text: 'http://192.0.2.10:8080', host: '192.0.2.10', port: 8080 },
      { text: '192.0.2.11:22', host: '192.0.2.11', port: 22 },
      { text: '[2001:db8::5]:443', host: '2001:db8::5', port: 443 },
      { text: 'db.lab.example', host: 'db.lab.example' },
      { text: '2001:db8::9', host: '2001:db8::9' },
    ]);
  });

  it('refuses ranges, names that are no host and an empty list, saying which (exit 2)', () => {
    const reason = (list: string) => {
      try {
        parseTargets(list);
      } catch (err) {
        expect(err).toBeInstanceOf(ImportError);
        expect((err as ImportError).kind).toBe('usage');
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(reason('192.0.2.0/24')).toBe(
      '--targets: "192.0.2.0/24" is a network range: name each host (Nuclei expands ranges; its results name the hosts)',
    );
    expect(reason('web_01')).toBe('--targets: "web_01" names no host (an IP address or an RFC 1123 host name)');
    expect(reason('http://')).toBe('--targets: "http://" is not a URL, host:port or host');
    expect(reason(' , ')).toBe('--targets: give at least one URL, host:port or host');
  });

  it("adds the targets' hosts, their addresses and ports to the file's coverage", async () => {
    const warnings: string[] = [];
    const lookup = async (name: string) => (name === 'shop.example' ? ['203.0.113.5', '2001:db8::80'] : []);
    const block = await coverageWithTargets(
      NUCLEI_FILE,
      parseTargets('https://shop.example,http://192.0.2.11:8080,gone.example:443'),
      lookup,
      (m) => warnings.push(m),
    );
    expect(block).toEqual({
      hosts: ['192.0.2.10', '192.0.2.11', '2001:db8::80', '203.0.113.5', 'gone.example', 'shop.example'],
      ports: { tcp: '443,8080' },
      profile: 'nuclei',
      tools: ['nuclei'],
      source: 'import:nuclei',
    });
    expect(warnings).toEqual([
      '--targets: gone.example does not resolve here; it covers the findings recorded on that name only',
    ]);
  });

  it('a bare host covers every TCP and UDP port (a block lists hosts and ports, not pairs)', async () => {
    const block = await coverageWithTargets(
      NUCLEI_FILE,
      parseTargets('192.0.2.12'),
      async () => [],
      () => {},
    );
    expect(block.hosts).toEqual(['192.0.2.10', '192.0.2.12']);
    expect(block.ports).toEqual({ tcp: '1-65535', udp: '1-65535' });
  });
});

describe('CVE ids in Nuclei template ids', () => {
  it('the id itself or a prefix of it, upper-cased; nothing from other ids', () => {
    expect(cveOfTemplate('CVE-2021-44228')).toEqual(['CVE-2021-44228']);
    expect(cveOfTemplate('cve-2021-44228-log4j-rce')).toEqual(['CVE-2021-44228']);
    expect(cveOfTemplate('apache-cve-2021-41773-lfi')).toEqual(['CVE-2021-41773']);
    expect(cveOfTemplate('CVE-2023-123456')).toEqual(['CVE-2023-123456']);
    expect(cveOfTemplate('tls-version')).toEqual([]);
    expect(cveOfTemplate('xcve-2021-44228')).toEqual([]);
    expect(cveOfTemplate('cve-2021-4422')).toEqual(['CVE-2021-4422']);
  });
});
