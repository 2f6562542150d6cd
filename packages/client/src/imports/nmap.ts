import type { VulnIndex } from '@svc/protocol';
import fs from 'node:fs';
import type { HostInfo, ScanFinding } from '../pipeline/types.ts';
import { CoverageBuilder } from '../pipeline/coverage-builder.ts';
import { addScannedPorts, answeredAddresses, NmapXmlStream, scanTimeOf, toHostInfos } from '../scanner/parse/index.ts';
import { detectFindings } from '../scanner/rules/index.ts';
import { given, type ImportedScan } from './common.ts';
import { headOf, IMPORT_XML_LIMITS, ImportError, readChunks, refuseDoctype } from './guard.ts';
import { Keeper, namesHost } from './keep.ts';
import { XmlPrologTrim } from './xml-prolog.ts';

/**
 * nmap's XML (`-oX`) from a scan run elsewhere, through the same streaming parser and detection
 * rules as `svc scan`, so the same hosts give the same findings. The rules judge certificates
 * against the scan's time, which nmap writes at the end (`<finished time>`): it is read from the
 * file's tail before the hosts are streamed, each host then handled and dropped.
 */

/** nmap options that take the next argument as their value (so it is not a target). */
const WITH_VALUE = new Set(
  (
    '-p -e -S -D -g -iL -iR -oX -oN -oG -oA -oS -oM -b -sI -T --exclude --excludefile ' +
    '--script --script-args --script-args-file --top-ports --port-ratio --source-port --data-length --data ' +
    '--data-string --ttl --spoof-mac --proxies --mtu --max-retries --host-timeout --scan-delay --max-scan-delay ' +
    '--min-rate --max-rate --min-hostgroup --max-hostgroup --min-parallelism --max-parallelism --min-rtt-timeout ' +
    '--max-rtt-timeout --initial-rtt-timeout --version-intensity --dns-servers --datadir --stylesheet ' +
    '--stats-every --resume --servicedb --versiondb --ip-options --exclude-ports --script-timeout'
  ).split(' '),
);

/** The targets named in nmap's command line (`args`), in order: what `svc scan --targets` gave. */
export function targetsOfArgs(args: string | undefined): string[] {
  const words = (args ?? '').split(/\s+/).filter((w) => w !== '');
  const out: string[] = [];
  let afterDashes = false;
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (afterDashes || !w.startsWith('-')) out.push(w);
    else if (w === '--') afterDashes = true;
    else if (WITH_VALUE.has(w)) i += 1;
  }
  return out;
}

function tailOf(file: string, max = 16 * 1024): string {
  const size = fs.statSync(file).size;
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(Math.min(max, size));
    const n = fs.readSync(fd, buf, 0, buf.length, size - buf.length);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** The scan time scanTimeOf would give once the run is read: `finished time`, else `start`. */
function scanTimeAhead(file: string): Date | undefined {
  const sec =
    /<finished\b[^>]*\btime="(\d+)"/.exec(tailOf(file))?.[1] ??
    /<nmaprun\b[^>]*\bstart="(\d+)"/.exec(headOf(file))?.[1];
  return sec === undefined ? undefined : new Date(Number(sec) * 1000);
}

export async function parseNmapFile(
  file: string,
  maxBytes: number,
  now: Date,
  vulnIndex?: VulnIndex | null,
): Promise<ImportedScan> {
  const ahead = scanTimeAhead(file);
  const scanTime = ahead ?? now;
  const findings: ScanFinding[] = [];
  const hosts: HostInfo[] = [];
  const keeper = new Keeper();
  let records = 0;
  let rootSeen = false;
  // The same rule as svc scan's: hosts nmap reports up, ports its <scaninfo> says it scanned;
  // an address that names no host (checked below for the findings too) is left out.
  const coverage = new CoverageBuilder();
  const stream = new NmapXmlStream({
    onHost: (host) => {
      records += 1;
      for (const a of answeredAddresses(host)) if (namesHost(a)) coverage.addHost(a);
      for (const f of detectFindings([host], { scanTime, vulnIndex })) {
        const kept = keeper.finding(f);
        if (kept !== null) findings.push(kept);
      }
      for (const h of toHostInfos([host])) {
        const kept = keeper.hostInfo(h);
        if (kept !== null) hosts.push(kept);
      }
    },
    onDoctype: refuseDoctype,
    limits: IMPORT_XML_LIMITS,
  });
  let info: ReturnType<NmapXmlStream['end']>;
  const decoder = new TextDecoder('utf-8');
  const prolog = new XmlPrologTrim();
  const write = (text: string) => {
    if (!rootSeen) {
      const first = /<([A-Za-z_][\w.:-]*)/.exec(text.replace(/<!--[\s\S]*?-->|<[?!][^>]*>/g, ''));
      if (first !== null) {
        rootSeen = true;
        if (first[1] !== 'nmaprun')
          throw new ImportError(`Not an nmap XML file: the root element is <${first[1]}>, expected <nmaprun>`);
      }
    }
    if (text !== '') stream.write(text);
  };
  try {
    for await (const chunk of readChunks(file, maxBytes)) write(prolog.push(decoder.decode(chunk, { stream: true })));
    write(prolog.push(decoder.decode()) + prolog.end());
    info = stream.end();
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(`Malformed nmap XML: ${(err as Error).message}`);
  }
  if (!info.complete)
    throw new ImportError(`${file} is cut short: it ends before </nmaprun> (a truncated nmap XML file)`);
  const target = targetsOfArgs(info.args).join(',');
  addScannedPorts(coverage, info);
  return {
    format: 'nmap',
    coverage: coverage.block({ profile: 'nmap', tools: ['nmap'], source: 'import:nmap' }),
    ...given('version', keeper.text(info.version)),
    findings,
    hosts,
    ...given('target', keeper.text(target)),
    ...given('startedAt', info.start === undefined ? undefined : new Date(info.start * 1000)),
    ...given('finishedAt', scanTimeOf(info) ?? undefined),
    records,
    checks: keeper.checks,
  };
}
