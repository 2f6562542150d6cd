import type { ScanFinding } from '../../pipeline/types.ts';
import { primaryAddress } from '../parse/host-info.ts';
import type { NmapPort } from '../parse/types.ts';
import type { RuleResult } from '../rules/finding.ts';
import { argAfter, listEvidence, toolFinding } from './finding.ts';
import type { EnrichmentTool, ToolInvocation, ToolOutput } from './types.ts';

/**
 * dig against each DNS server nmap found, for each domain of `svc scan --domains`: zone transfer
 * (AXFR), SPF and DMARC. Every query names the found server (`@<ip>`) and asks without recursion,
 * so only that server is asked and only what it serves itself counts; SPF and DMARC are judged
 * only from an authoritative answer (`aa`), as a referral or refusal says nothing about the domain.
 */

const DOMAIN = /^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
/** Three seconds a try, one try: a server that does not answer is not waited for. */
const QUERY_OPTIONS = ['+norecurse', '+time=3', '+tries=1', '+nocookie'];

type Check = 'axfr' | 'spf' | 'dmarc';

interface Answer {
  status: string | undefined;
  authoritative: boolean;
  records: { name: string; type: string; data: string }[];
}

/** dig's default output: the HEADER status and flags, and the resource records it printed. */
function parseAnswer(stdout: string): Answer {
  const status = /->>HEADER<<- opcode: \w+, status: (\w+)/.exec(stdout)?.[1];
  const flags = /^;; flags: ([a-z ]*);/m.exec(stdout)?.[1]?.split(' ') ?? [];
  const records = stdout.split('\n').flatMap((line) => {
    if (line.startsWith(';') || line.trim() === '') return [];
    const m = /^(\S+)\s+\d+\s+IN\s+(\S+)\s+(.*)$/.exec(line);
    return m === null ? [] : [{ name: m[1] as string, type: m[2] as string, data: m[3] as string }];
  });
  return { status, authoritative: flags.includes('aa'), records };
}

/** A TXT record's text: its quoted strings joined, as a receiver reads it. */
function txtValue(data: string): string {
  const parts = [...data.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] as string).replace(/\\(.)/g, '$1'));
  return parts.length === 0 ? data : parts.join('');
}

function dnsPort(ports: readonly NmapPort[]): NmapPort | undefined {
  const dns = ports.filter((p) => p.state === 'open' && p.service?.name === 'domain');
  // TCP first: a zone transfer needs it, and a TCP answer is never truncated.
  return dns.find((p) => p.protocol === 'tcp') ?? dns[0];
}

function checkOf(args: readonly string[]): Check {
  if (argAfter(args, '-t') === 'AXFR') return 'axfr';
  return argAfter(args, '-q')?.startsWith('_dmarc.') === true ? 'dmarc' : 'spf';
}

const SPF_REMEDIATION =
  'Publish one SPF TXT record listing the hosts that send mail for the domain and ending in "-all" (or "~all" ' +
  'while testing); a domain that sends no mail publishes "v=spf1 -all".';
const DMARC_REMEDIATION =
  'Publish a DMARC TXT record at _dmarc.<domain> with p=quarantine or p=reject and a rua address for reports, ' +
  'after monitoring with p=none long enough to see every legitimate sender.';

function axfrFinding(domain: string, server: string, out: ToolOutput): RuleResult | undefined {
  const answer = parseAnswer(out.stdout);
  if (/; Transfer failed|communications error|connection refused/i.test(out.stdout)) return undefined;
  if (!answer.records.some((r) => r.type === 'SOA')) return undefined;
  const size = /;; XFR size: (\d+) records/.exec(out.stdout)?.[1];
  const count = size === undefined ? answer.records.length : Number(size);
  const names = [...new Set(answer.records.map((r) => r.name))];
  return {
    rule_id: `dns-zone-transfer:${domain}`,
    title: `DNS zone transfer (AXFR) of ${domain} allowed`,
    severity: 'high',
    category: 'misconfiguration',
    evidence: `dig @${server} AXFR ${domain} returned ${count} records; names: ${listEvidence(names, 10)}`,
    description:
      'The DNS server hands the whole zone to anyone who asks: every host name and address in it, a map of the ' +
      'network for an attacker.',
    remediation:
      'Allow zone transfers only to the secondary servers (BIND: allow-transfer { <secondaries>; }; or a TSIG key).',
    cwe: ['CWE-200'],
  };
}

function spfFinding(domain: string, server: string, answer: Answer): RuleResult | undefined {
  const spf = answer.records.filter((r) => r.type === 'TXT').map((r) => txtValue(r.data));
  const records = spf.filter((t) => /^v=spf1(\s|$)/i.test(t));
  if (records.length === 0) {
    return {
      rule_id: `email-spf-missing:${domain}`,
      title: `No SPF record for ${domain}`,
      severity: 'medium',
      category: 'misconfiguration',
      evidence:
        `dig @${server} TXT ${domain}: authoritative ${answer.status}, no "v=spf1" record` +
        (spf.length === 0
          ? ''
          : ` (TXT: ${listEvidence(
              spf.map((t) => `"${t}"`),
              5,
            )})`),
      description:
        "Without SPF, receiving mail servers cannot tell mail from the domain's own servers from forged mail, " +
        "which makes phishing in the domain's name easier.",
      remediation: SPF_REMEDIATION,
      urls: ['https://www.rfc-editor.org/rfc/rfc7208'],
    };
  }
  const allowAll = records.find((t) => /(^|\s)\+all(\s|$)/i.test(t));
  if (allowAll === undefined) return undefined;
  return {
    rule_id: `email-spf-allow-all:${domain}`,
    title: `SPF record for ${domain} allows every sender (+all)`,
    severity: 'high',
    category: 'misconfiguration',
    evidence: `dig @${server} TXT ${domain}: "${allowAll}"`,
    description: 'An SPF record ending in "+all" authorises every host on the internet to send mail for the domain.',
    remediation: SPF_REMEDIATION,
    urls: ['https://www.rfc-editor.org/rfc/rfc7208'],
  };
}

function dmarcFinding(domain: string, server: string, answer: Answer): RuleResult | undefined {
  const dmarc = answer.records
    .filter((r) => r.type === 'TXT')
    .map((r) => txtValue(r.data))
    .find((t) => /^v=DMARC1\s*(;|$)/i.test(t));
  const urls = ['https://www.rfc-editor.org/rfc/rfc7489'];
  if (dmarc === undefined) {
    return {
      rule_id: `email-dmarc-missing:${domain}`,
      title: `No DMARC record for ${domain}`,
      severity: 'medium',
      category: 'misconfiguration',
      evidence: `dig @${server} TXT _dmarc.${domain}: authoritative ${answer.status}, no "v=DMARC1" record`,
      description:
        'Without DMARC, receivers apply no policy to mail that fails SPF and DKIM for the domain, and the owner ' +
        'gets no reports of forged mail.',
      remediation: DMARC_REMEDIATION,
      urls,
    };
  }
  const policy = /(?:^|;)\s*p\s*=\s*([a-z]+)/i.exec(dmarc)?.[1]?.toLowerCase();
  if (policy !== 'none') return undefined;
  return {
    rule_id: `email-dmarc-policy-none:${domain}`,
    title: `DMARC policy for ${domain} is p=none`,
    severity: 'low',
    category: 'misconfiguration',
    evidence: `dig @${server} TXT _dmarc.${domain}: "${dmarc}"`,
    description: "A DMARC policy of p=none only monitors: forged mail in the domain's name is still delivered.",
    remediation: DMARC_REMEDIATION,
    urls,
  };
}

export const dig: EnrichmentTool = {
  kind: 'enrichment',
  name: 'dig',
  debianPackage: 'bind9-dnsutils',
  capability: 'DNS checks on the found DNS servers: zone transfer (AXFR), SPF and DMARC of --domains',
  timeoutMs: 30_000,
  plan(hosts, ctx) {
    const domains = ctx.domains.filter((d) => DOMAIN.test(d)).map((d) => d.replace(/\.$/, '').toLowerCase());
    return hosts.flatMap((host) => {
      const address = primaryAddress(host);
      const port = dnsPort(host.ports);
      if (address === undefined || port === undefined) return [];
      const transport = port.protocol === 'tcp' ? ['+tcp'] : [];
      const query = (type: string, name: string, label: string, extra: readonly string[]): ToolInvocation => ({
        args: [`@${address}`, '-p', String(port.portid), ...QUERY_OPTIONS, ...extra, '-t', type, '-q', name],
        label: `${address}:${port.protocol}/${port.portid} ${label}`,
        host: address,
        port: port.portid,
        service: 'domain',
      });
      return domains.flatMap((d) => [
        query('AXFR', d, `AXFR ${d}`, []),
        query('TXT', d, `SPF ${d}`, transport),
        query('TXT', `_dmarc.${d}`, `DMARC ${d}`, transport),
      ]);
    });
  },
  parse(invocation: ToolInvocation, output: ToolOutput): ScanFinding[] {
    if (output.timedOut) return [];
    const check = checkOf(invocation.args);
    const name = argAfter(invocation.args, '-q') ?? '';
    const domain = check === 'dmarc' ? name.slice('_dmarc.'.length) : name;
    const server = invocation.host ?? '';
    // AXFR always runs over TCP; the TXT queries over what nmap found.
    const protocol = check === 'axfr' || invocation.args.includes('+tcp') ? 'tcp' : 'udp';
    let result: RuleResult | undefined;
    if (check === 'axfr') result = axfrFinding(domain, server, output);
    else {
      const answer = parseAnswer(output.stdout);
      // Only an authoritative answer says what the domain publishes; NXDOMAIN at the apex means the server has no such domain.
      const known = answer.status === 'NOERROR' || (check === 'dmarc' && answer.status === 'NXDOMAIN');
      if (!answer.authoritative || !known) return [];
      result = check === 'spf' ? spfFinding(domain, server, answer) : dmarcFinding(domain, server, answer);
    }
    return result === undefined
      ? []
      : [toolFinding('dig', invocation, result, { protocol: protocol, evidenceAsIs: true })];
  },
};
