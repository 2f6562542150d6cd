import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { NmapHost } from '../src/scanner/parse/types.ts';
import { dig } from '../src/scanner/tools/dig.ts';
import type { ToolContext, ToolInvocation, ToolOutput } from '../src/scanner/tools/index.ts';
import { MASSCAN_MIN_ADDRESSES, masscan } from '../src/scanner/tools/masscan.ts';
import { smbclient } from '../src/scanner/tools/smbclient.ts';
import { snmpwalk } from '../src/scanner/tools/snmpwalk.ts';

/**
 * The tools' plans and parsers on real output: tests/fixtures/tools/ holds what nmap, snmpwalk,
 * smbclient, dig and masscan printed against the test network (scan-tools2-netlab.slow.test.ts writes
 * them with SVC_CAPTURE_TOOL_FIXTURES=1).
 */

const dir = fileURLToPath(new URL('./fixtures/tools/', import.meta.url));
const read = (name: string) => readFileSync(`${dir}${name}`, 'utf8');

interface Captured {
  invocation: ToolInvocation;
  output: ToolOutput;
}

const captured = (name: string): Captured => {
  const c = JSON.parse(read(`${name}.json`)) as { invocation: ToolInvocation; output: Omit<ToolOutput, 'durationMs'> };
  return { invocation: c.invocation, output: { ...c.output, durationMs: 1 } };
};

const hosts = JSON.parse(read('nmap-hosts.json')) as NmapHost[];
const ctx: ToolContext = {
  scanTime: new Date('2026-11-25T18:00:00Z'),
  workDir: '/nonexistent',
  privileged: true,
  domains: ['netlab.test', 'relaxed.netlab.test', 'strict.netlab.test'],
};
const out = (stdout: string, stderr = '', exitCode = 0): ToolOutput => ({
  stdout,
  stderr,
  exitCode,
  timedOut: false,
  durationMs: 1,
});

describe('snmpwalk', () => {
  it('plans four walks with the community the snmp rule proved, on the SNMP service only', () => {
    const plan = snmpwalk.plan(hosts, ctx);
    expect(plan.map((i) => i.args)).toEqual(
      ['1.3.6.1.2.1.1', '1.3.6.1.2.1.2.2.1.2', '1.3.6.1.2.1.25.4.2.1.4', '1.3.6.1.2.1.25.6.3.1.2'].map((oid) => [
        ...['-v2c', '-c', 'public', '-t', '2', '-r', '1', '-Ln', '-m', '', '-On', '-OQ', '-Oe', '-Ot'],
        'udp:10.231.0.10:161',
        oid,
      ]),
    );
    expect(plan.every((i) => i.host === '10.231.0.10' && i.port === 161 && i.service === 'snmp')).toBe(true);
  });

  it('plans nothing for an SNMP service without default-community evidence', () => {
    const quiet = hosts.map((h) => ({
      ...h,
      ports: h.ports.map((p) => ({ ...p, scripts: [], service: p.service && { ...p.service, extrainfo: undefined } })),
    }));
    expect(snmpwalk.plan(quiet, ctx)).toEqual([]);
  });

  it('reports the system group with description, contact, name and location', () => {
    const { invocation, output } = captured('snmpwalk-system-community-public');
    const [f, ...rest] = snmpwalk.parse(invocation, output, ctx);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      rule_id: 'snmp-exposes-system',
      severity: 'low',
      category: 'default_credentials',
      host: '10.231.0.10',
      port: 161,
      protocol: 'udp',
      service: 'snmp',
      source: 'snmpwalk',
      references: { cwe: ['CWE-200'] },
    });
    expect(f?.evidence).toBe(
      'snmpwalk -v2c -c public 1.3.6.1.2.1.1 (system): sysDescr: "Linux vm 6.18.44-fc-v782 #1 SMP PREEMPT_DYNAMIC @0 ' +
        'x86_64"; sysContact: "none"; sysName: "vm"; sysLocation: "netlab"',
    );
  });

  it('reports interfaces, processes and installed software with counts', () => {
    const evidence = (name: string) => {
      const { invocation, output } = captured(name);
      return snmpwalk.parse(invocation, output, ctx).map((f) => `${f.rule_id} ${f.severity}: ${f.evidence}`);
    };
    expect(evidence('snmpwalk-interfaces-community-public')).toEqual([
      'snmp-exposes-interfaces low: snmpwalk -v2c -c public 1.3.6.1.2.1.2.2.1.2 (interfaces): 2 interfaces: lo, eth0',
    ]);
    expect(evidence('snmpwalk-running-processes-community-public')).toEqual([
      'snmp-exposes-processes medium: snmpwalk -v2c -c public 1.3.6.1.2.1.25.4.2.1.4 (running processes): ' +
        '1 running processes: /usr/sbin/snmpd',
    ]);
    const software = captured('snmpwalk-installed-software-community-public');
    const lines = software.output.stdout.split('\n').filter((l) => l.startsWith('.1.3.6.1.2.1.25.6.3.1.2.')).length;
    const [f] = snmpwalk.parse(software.invocation, software.output, ctx);
    expect(f?.rule_id).toBe('snmp-exposes-software');
    expect(f?.evidence).toMatch(
      new RegExp(
        `^snmpwalk -v2c -c public 1\\.3\\.6\\.1\\.2\\.1\\.25\\.6\\.3\\.1\\.2 \\(installed software\\): ${lines} `,
      ),
    );
    expect(f?.evidence).toMatch(/, \.\.\. \(\d+ more\)$/);
  });

  it('reports nothing when the agent does not answer or lacks the subtree', () => {
    const { invocation } = captured('snmpwalk-running-processes-community-public');
    expect(snmpwalk.parse(invocation, out('', 'Timeout: No Response from 10.231.0.10:161\n', 1), ctx)).toEqual([]);
    const none = '.1.3.6.1.2.1.25.4.2.1.4 = No Such Object available on this agent at this OID\n';
    expect(snmpwalk.parse(invocation, out(none), ctx)).toEqual([]);
    expect(
      snmpwalk.parse(invocation, { ...captured('snmpwalk-system-community-public').output, timedOut: true }, ctx),
    ).toEqual([]);
  });
});

describe('smbclient', () => {
  it('plans one anonymous listing per SMB host, on the port nmap found', () => {
    expect(smbclient.plan(hosts, ctx)).toEqual([
      {
        args: ['-N', '-g', '-L', '//10.231.0.14', '-p', '445', '-m', 'SMB3', '-t', '10'],
        label: '10.231.0.14:445 share list',
        host: '10.231.0.14',
        port: 445,
        service: 'netbios-ssn',
      },
    ]);
  });

  it('reports the listing, and follows up with a read-only `ls` of each disk share', () => {
    const { invocation, output } = captured('smbclient-share-list');
    expect(smbclient.parse(invocation, output, ctx)).toEqual([
      expect.objectContaining({
        rule_id: 'smb-anonymous-share-list',
        severity: 'medium',
        host: '10.231.0.14',
        port: 445,
        protocol: 'tcp',
        source: 'smbclient',
        evidence: 'smbclient -N -L listed 2 shares: public (Disk), IPC$ (IPC: IPC Service (Samba 4.17.12-Debian))',
      }),
    ]);
    expect(smbclient.followUp?.(invocation, output, ctx).map((i) => i.args)).toEqual([
      ['-N', '//10.231.0.14/public', '-p', '445', '-m', 'SMB3', '-t', '10', '-c', 'ls'],
    ]);
  });

  it('reports a share an anonymous session can list, with its entries', () => {
    const { invocation, output } = captured('smbclient-share-public');
    expect(smbclient.parse(invocation, output, ctx)).toEqual([
      expect.objectContaining({
        rule_id: 'smb-anonymous-share-readable:public',
        severity: 'high',
        source: 'smbclient',
        evidence: 'smbclient -N //10.231.0.14/public -c ls listed 1 entries: README.txt',
      }),
    ]);
    expect(smbclient.followUp?.(invocation, output, ctx)).toEqual([]);
  });

  it('reports nothing when the server refuses, and never follows a share name that could be an option', () => {
    const { invocation } = captured('smbclient-share-list');
    const refused = out('', 'do_connect: Connection to 10.231.0.14 failed (Error NT_STATUS_CONNECTION_REFUSED)\n', 1);
    expect(smbclient.parse(invocation, refused, ctx)).toEqual([]);
    const denied = out('tree connect failed: NT_STATUS_ACCESS_DENIED\n', '', 1);
    expect(smbclient.parse(captured('smbclient-share-public').invocation, denied, ctx)).toEqual([]);
    const odd = out('Disk|-c|\nDisk|a/b|\nDisk|ok share|\nPrinter|lp|\n');
    expect(smbclient.followUp?.(invocation, odd, ctx).map((i) => i.args[1])).toEqual(['//10.231.0.14/ok share']);
  });
});

describe('dig', () => {
  it('plans AXFR, SPF and DMARC per domain against the found server over TCP', () => {
    const plan = dig.plan(hosts, ctx);
    expect(plan.map((i) => i.args.slice(7).join(' '))).toEqual([
      '-t AXFR -q netlab.test',
      '+tcp -t TXT -q netlab.test',
      '+tcp -t TXT -q _dmarc.netlab.test',
      '-t AXFR -q relaxed.netlab.test',
      '+tcp -t TXT -q relaxed.netlab.test',
      '+tcp -t TXT -q _dmarc.relaxed.netlab.test',
      '-t AXFR -q strict.netlab.test',
      '+tcp -t TXT -q strict.netlab.test',
      '+tcp -t TXT -q _dmarc.strict.netlab.test',
    ]);
    for (const i of plan) {
      expect(i.args.slice(0, 7)).toEqual([
        '@10.231.0.15',
        '-p',
        '53',
        '+norecurse',
        '+time=3',
        '+tries=1',
        '+nocookie',
      ]);
    }
    expect(dig.plan(hosts, { ...ctx, domains: ['-x', 'a b', 'ok.example'] }).map((i) => i.args.at(-1))).toEqual([
      'ok.example',
      'ok.example',
      '_dmarc.ok.example',
    ]);
  });

  it('reports each weakness of the captured answers, and nothing for the strict domain or a failed transfer', () => {
    const names = ['netlab.test', 'relaxed.netlab.test', 'strict.netlab.test'].flatMap((d) =>
      ['axfr', 'spf', 'dmarc'].map((c) => `dig-${c}-${d}`),
    );
    const found = names.flatMap((n) => {
      const { invocation, output } = captured(n);
      return dig
        .parse(invocation, output, ctx)
        .map((f) => `${n}: ${f.rule_id} ${f.severity} ${f.protocol} | ${f.evidence}`);
    });
    expect(found).toEqual([
      'dig-axfr-netlab.test: dns-zone-transfer:netlab.test high tcp | dig @10.231.0.15 AXFR netlab.test returned 16 ' +
        'records; names: netlab.test., data.netlab.test., dns.netlab.test., hardened.netlab.test., ' +
        'legacy.netlab.test., ns.netlab.test., relaxed.netlab.test., _dmarc.relaxed.netlab.test., smb.netlab.test., ' +
        'ssh.netlab.test., ... (3 more)',
      'dig-spf-netlab.test: email-spf-missing:netlab.test medium tcp | dig @10.231.0.15 TXT netlab.test: ' +
        'authoritative NOERROR, no "v=spf1" record (TXT: "netlab test zone")',
      'dig-dmarc-netlab.test: email-dmarc-missing:netlab.test medium tcp | dig @10.231.0.15 TXT _dmarc.netlab.test: ' +
        'authoritative NXDOMAIN, no "v=DMARC1" record',
      'dig-spf-relaxed.netlab.test: email-spf-allow-all:relaxed.netlab.test high tcp | dig @10.231.0.15 TXT ' +
        'relaxed.netlab.test: "v=spf1 +all"',
      'dig-dmarc-relaxed.netlab.test: email-dmarc-policy-none:relaxed.netlab.test low tcp | dig @10.231.0.15 TXT ' +
        '_dmarc.relaxed.netlab.test: "v=DMARC1; p=none"',
    ]);
  });

  it('judges SPF and DMARC only from an authoritative answer', () => {
    const { invocation } = captured('dig-spf-netlab.test');
    const refused = [
      ';; ->>HEADER<<- opcode: QUERY, status: REFUSED, id: 3374',
      ';; flags: qr; QUERY: 1, ANSWER: 0, AUTHORITY: 0, ADDITIONAL: 1',
    ].join('\n');
    expect(dig.parse(invocation, out(refused), ctx)).toEqual([]);
    const referral = captured('dig-spf-netlab.test').output.stdout.replace(';; flags: qr aa;', ';; flags: qr;');
    expect(dig.parse(invocation, out(referral), ctx)).toEqual([]);
    const noDomain = captured('dig-dmarc-netlab.test').output.stdout;
    expect(dig.parse(invocation, out(noDomain), ctx)).toEqual([]);
  });
});

describe('masscan', () => {
  it('reads the live hosts and their open ports, sorted, from the captured sweep', () => {
    expect(masscan.parse(captured('masscan-sweep').output, ctx)).toEqual([
      { host: '10.231.0.10', ports: [21, 23] },
      { host: '10.231.0.11', ports: [5432, 6379, 11211] },
      { host: '10.231.0.12', ports: [80, 443] },
      { host: '10.231.0.13', ports: [22, 2222] },
      { host: '10.231.0.14', ports: [445] },
      { host: '10.231.0.15', ports: [53] },
      { host: '10.231.0.20', ports: [22, 443] },
    ]);
  });

  it(`wants more than ${MASSCAN_MIN_ADDRESSES - 1} IPv4 addresses, as root, and nothing it cannot express`, () => {
    expect(masscan.wants(['10.0.0.0/24'], ctx)).toBe(false);
    expect(masscan.wants(['10.0.0.0/24', '10.0.1.1'], ctx)).toBe(true);
    expect(masscan.wants(['10.0.0.1-200'], ctx)).toBe(false);
    expect(masscan.wants(['10.0.0-1.1-200'], ctx)).toBe(true);
    expect(masscan.wants(['10.0.0.0/16'], { ...ctx, privileged: false })).toBe(false);
    expect(masscan.wants(['10.0.0.0/16', 'example.test'], ctx)).toBe(false);
    expect(masscan.wants(['fd00::/112'], ctx)).toBe(false);
    expect(masscan.wants(['10.0.0.0/16'], { ...ctx, ports: 'U:161' })).toBe(false);
  });

  it('sweeps the TCP ports of the scan, with octet ranges as masscan ranges', () => {
    const plan = masscan.plan(['10.0.0-1.1-254', '10.0.5.0/24'], { ...ctx, ports: 'T:21-23,80,U:161,T:443' });
    expect(plan.args).toEqual(
      ['-p', '21-23,80,443', '--rate', '5000', '--retries', '1', '--wait', '3', '--open-only', '-oL', '-'].concat(
        '10.0.0.1-10.0.0.254',
        '10.0.1.1-10.0.1.254',
        '10.0.5.0/24',
      ),
    );
    expect(masscan.plan(['10.0.5.0/24'], ctx).args[1]).toBe(
      '21-23,25,80,111,139,443,445,512-514,873,990,1433,2049,3306,3389,5432,5900,6379,8080,8443,9200,11211,27017',
    );
  });
});
