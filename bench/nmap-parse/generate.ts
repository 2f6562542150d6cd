/**
 * Writes a large nmap `-oX` document for the parse benchmark. Its pieces are cut from the
 * project's nmap fixtures (packages/client/tests/fixtures/nmap: real nmap 7.93 output and the
 * hand-written shapes of the same version), so every port, service, CPE, NSE script with tables and OS
 * match is one nmap really writes; hosts differ in address, host name, port mix and OS.
 * Deterministic for a given seed.
 */
import fs from 'node:fs';
import { seededRandom } from '@svc/test-support/random';
import path from 'node:path';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'packages', 'client', 'tests', 'fixtures', 'nmap');
const SOURCES = ['handwritten-lab-odd-ports.xml', 'real-lab-odd-ports.xml'];

/** Every `<open>…</close>` block of a fixture, as text (fixture pieces to copy, not a parse). */
function blocks(text: string, open: string, close: string): string[] {
  const out: string[] = [];
  let at = text.indexOf(open);
  while (at >= 0) {
    const end = text.indexOf(close, at);
    if (end < 0) break;
    out.push(text.slice(at, end + close.length));
    at = text.indexOf(open, end);
  }
  return out;
}

interface Pieces {
  /** Open-port blocks, by `protocol/portid`, so one host never holds the same port twice. */
  ports: [string, string][];
  os: string[];
  hostscripts: string[];
}

function pieces(): Pieces {
  const texts = SOURCES.map((f) => fs.readFileSync(path.join(FIXTURES, f), 'utf8'));
  const ports = texts.flatMap((t) => blocks(t, '<port ', '</port>')).filter((p) => p.includes('state="open"'));
  const keyed = ports.map((p): [string, string] => {
    const proto = p.slice(p.indexOf('protocol="') + 10, p.indexOf('"', p.indexOf('protocol="') + 10));
    const id = p.slice(p.indexOf('portid="') + 8, p.indexOf('"', p.indexOf('portid="') + 8));
    return [`${proto}/${id}`, p];
  });
  return {
    ports: keyed,
    os: texts.flatMap((t) => blocks(t, '<os>', '</os>')),
    hostscripts: texts.flatMap((t) => blocks(t, '<hostscript>', '</hostscript>')),
  };
}

export interface Generated {
  file: string;
  bytes: number;
  hosts: number;
  up: number;
  ports: number;
  scripts: number;
  osHosts: number;
}

/**
 * Writes `hosts` hosts (about 1 in 12 down) to `file`: each host up has 2–8 open ports, a MAC
 * address, a PTR name for most, OS matches for about half and SMB host scripts for some.
 */
export async function generateNmapXml(file: string, hosts: number, seed: number): Promise<Generated> {
  const p = pieces();
  if (p.ports.length < 8 || p.os.length === 0 || p.hostscripts.length === 0) {
    throw new Error(`the nmap fixtures in ${FIXTURES} lack ports, OS matches or host scripts`);
  }
  const rnd = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;
  const out = fs.createWriteStream(file);
  const write = async (s: string) => {
    if (!out.write(s)) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  const start = 1_795_600_000;
  const counts = { up: 0, ports: 0, scripts: 0, osHosts: 0 };
  await write(
    '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE nmaprun>\n' +
      `<nmaprun scanner="nmap" args="nmap -sS -sU -sV -O --script (default and not external) -oX - 10.0.0.0/18" start="${start}" startstr="Wed Nov 25 09:46:40 2026" version="7.93" xmloutputversion="1.05">\n` +
      '<scaninfo type="syn" protocol="tcp" numservices="1000" services="1-1000"/>\n' +
      '<verbose level="0"/>\n<debugging level="0"/>\n',
  );
  for (let i = 0; i < hosts; i++) {
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const t = start + i;
    if (i % 12 === 11) {
      await write(
        `<host><status state="down" reason="no-response" reason_ttl="0"/>\n<address addr="${ip}" addrtype="ipv4"/>\n<hostnames>\n</hostnames>\n<times srtt="-1" rttvar="-1" to="1000000"/>\n</host>\n`,
      );
      continue;
    }
    counts.up += 1;
    const mac = `02:42:${[(i >> 16) & 255, (i >> 8) & 255, i & 255, 7].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':')}`;
    const n = 2 + Math.floor(rnd() * 7);
    const chosen = new Map<string, string>();
    while (chosen.size < n) {
      const [key, block] = pick(p.ports);
      chosen.set(key, block);
    }
    const ports = [...chosen.values()];
    counts.ports += ports.length;
    counts.scripts += ports.reduce((s, b) => s + b.split('<script ').length - 1, 0);
    const os = rnd() < 0.5 ? pick(p.os) : '';
    if (os !== '') counts.osHosts += 1;
    const hostscript = rnd() < 0.1 ? pick(p.hostscripts) : '';
    const name = rnd() < 0.8 ? `<hostname name="host-${i}.corp.example" type="PTR"/>\n` : '';
    await write(
      `<host starttime="${t}" endtime="${t + 60}"><status state="up" reason="arp-response" reason_ttl="0"/>\n` +
        `<address addr="${ip}" addrtype="ipv4"/>\n<address addr="${mac}" addrtype="mac" vendor="Private"/>\n` +
        `<hostnames>\n${name}</hostnames>\n` +
        `<ports><extraports state="closed" count="${1000 - n}"><extrareasons reason="reset" count="${1000 - n}" proto="tcp" ports="1-1000"/></extraports>\n` +
        `${ports.join('\n')}\n</ports>\n${os === '' ? '' : `${os}\n`}${hostscript === '' ? '' : `${hostscript}\n`}` +
        `<times srtt="312" rttvar="120" to="100000"/>\n</host>\n`,
    );
  }
  const end = start + hosts + 60;
  await write(
    `<runstats><finished time="${end}" timestr="Wed Nov 25 12:33:20 2026" summary="Nmap done; ${hosts} IP addresses (${counts.up} hosts up) scanned" elapsed="${end - start}" exit="success"/><hosts up="${counts.up}" down="${hosts - counts.up}" total="${hosts}"/>\n</runstats>\n</nmaprun>\n`,
  );
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return { file, bytes: fs.statSync(file).size, hosts, ...counts };
}
