import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Settings } from '../src/kit/config/settings.ts';
import { parseNmapXml } from '../src/scanner/parse/index.ts';
import { answeredAddresses } from '../src/scanner/parse/coverage.ts';
import { runScan } from '../src/scanner/run/run-scan.ts';
import { BUSINESS_LICENSE } from '@svc/test-support/report-session';
import { type RecordingServer, startRecordingServer } from './helpers/recording-server.ts';

/**
 * `svc scan`'s coverage block (docs/scanner/profiles.md, "Coverage") through runScan in
 * process, with a stand-in for nmap that prints a fixed XML run: the hosts nmap reports up (one
 * without any open port, as nmap reports it without `--open`), one cut short by
 * `--host-timeout`, the ports of `<scaninfo>`, and what the remediation stage does with them.
 */

const NOW = new Date('2025-03-01T12:00:00.000Z');
const TARGET = '10.0.0.0/29';
const XML = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nmaprun>
<nmaprun scanner="nmap" args="nmap -sS -p T:21-23,80,U:161 -oX - -- 10.0.0.0/29" start="1740830400" version="7.93" xmloutputversion="1.05">
<scaninfo type="syn" protocol="tcp" numservices="4" services="21-23,80"/>
<scaninfo type="udp" protocol="udp" numservices="1" services="161"/>
<host starttime="1740830400" endtime="1740830401"><status state="up" reason="arp-response" reason_ttl="0"/>
<address addr="10.0.0.5" addrtype="ipv4"/><hostnames></hostnames>
<ports><port protocol="tcp" portid="23"><state state="closed" reason="reset" reason_ttl="64"/><service name="telnet" method="table" conf="3"/></port>
<port protocol="tcp" portid="80"><state state="closed" reason="reset" reason_ttl="64"/><service name="http" method="table" conf="3"/></port></ports>
</host>
<host starttime="1740830400" endtime="1740830401"><status state="up" reason="arp-response" reason_ttl="0"/>
<address addr="10.0.0.6" addrtype="ipv4"/><hostnames></hostnames>
<ports><port protocol="tcp" portid="22"><state state="open" reason="syn-ack" reason_ttl="64"/><service name="ssh" method="table" conf="3"/></port></ports>
</host>
<host starttime="1740830400" endtime="1740831300" timedout="true"><status state="up" reason="arp-response" reason_ttl="0"/>
<address addr="10.0.0.7" addrtype="ipv4"/><hostnames></hostnames>
</host>
<runstats><finished time="1740830460" timestr="x" summary="x" elapsed="60" exit="success"/><hosts up="3" down="5" total="8"/></runstats>
</nmaprun>
`;

let dir: string;
let nmapPath: string;
let server: RecordingServer;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-scan-coverage-'));
  await fs.writeFile(path.join(dir, 'run.xml'), XML);
  nmapPath = path.join(dir, 'nmap');
  await fs.writeFile(nmapPath, `#!/bin/sh\ncat '${path.join(dir, 'run.xml')}'\n`, { mode: 0o755 });
  server = await startRecordingServer();
});
afterAll(async () => {
  await server.close();
  await fs.rm(dir, { recursive: true, force: true });
});

async function scan(root: string, opts: { portal?: boolean; nmap?: string } = {}) {
  const infos: string[] = [];
  const result = await runScan(
    {
      targets: TARGET,
      profile: 'quick_recon',
      privileged: true,
      nmapPath: opts.nmap ?? nmapPath,
      root,
      exceptions: [],
      settings: new Settings({ env: {} }),
      license: BUSINESS_LICENSE,
      tools: [],
      ...(opts.portal
        ? {
            portal: {
              uploadUrl: `${server.base}/api/upload`,
              apiKey: `svc_biz_${'ab'.repeat(32)}`,
              jwt: null,
              timeoutS: 5,
            },
          }
        : {}),
    },
    { now: () => NOW, info: (m) => infos.push(m), warn: (m) => infos.push(`warning: ${m}`) },
  );
  const log = await fs.readFile(path.join(result.path, 'pipeline.log'), 'utf8');
  return { ...result, infos, log };
}

/** A prior session of the target in `root`, with items on each kind of place. */
async function writePrior(root: string): Promise<void> {
  const prior = {
    metadata: { session_id: '20250222_120000', target: TARGET, finished_at: '2025-02-22T12:10:00.000Z' },
    findings: [],
    remediation: [
      // 10.0.0.5 answered and port 23 was scanned: telnet was closed, so it is resolved.
      { title: 'Telnet enabled', severity: 'high', host: '10.0.0.5', port: 23, protocol: 'tcp', status: 'new' },
      // Port 6379 is not in this scan's list: not checked.
      { title: 'Redis open', severity: 'high', host: '10.0.0.5', port: 6379, protocol: 'tcp', status: 'in_progress' },
      // 10.0.0.7 timed out: not checked, whatever its port.
      { title: 'FTP anonymous', severity: 'medium', host: '10.0.0.7', port: 21, protocol: 'tcp', status: 'new' },
    ],
  };
  const sessionDir = path.join(root, '20250222_120000');
  await fs.mkdir(sessionDir, { recursive: true });
  await fs.writeFile(path.join(sessionDir, 'session_results.json'), JSON.stringify(prior));
}

describe('nmap coverage', () => {
  it('a host is answered when nmap reports it up and finished it; one cut short by --host-timeout is not', () => {
    const run = parseNmapXml(XML);
    expect(run.hosts.map(answeredAddresses)).toEqual([['10.0.0.5'], ['10.0.0.6'], []]);
    expect(run.hosts[2]?.timedOut).toBe(true);
  });

  it('svc scan writes the hosts that answered (one without an open port too), the ports of <scaninfo>, profile and tools', async () => {
    const { doc, id } = await scan(path.join(dir, 'plain'));
    expect(id).toBe('20250301_120000');
    expect(doc.coverage).toEqual({
      hosts: ['10.0.0.5', '10.0.0.6'],
      ports: { tcp: '21-23,80', udp: '161' },
      profile: 'quick_recon',
      tools: ['nmap'],
      source: 'svc-scan',
    });
  });

  it('prior items: resolved where the scan looked, not checked where it did not (port not scanned, host timed out)', async () => {
    const root = path.join(dir, 'tracked');
    await writePrior(root);
    const { doc } = await scan(root);
    expect(doc.remediation_resolved?.map((e) => e.title)).toEqual(['Telnet enabled']);
    expect(doc.remediation_not_checked?.map((e) => [e.title, e.status])).toEqual([
      ['Redis open', 'in_progress'],
      ['FTP anonymous', 'new'],
    ]);
  });

  it('a second scan starting in the same second takes the next free second', async () => {
    const root = path.join(dir, 'same-second');
    const first = await scan(root);
    const second = await scan(root);
    expect([first.id, second.id]).toEqual(['20250301_120000', '20250301_120001']);
    expect(second.doc.metadata?.session_id).toBe('20250301_120001');
    expect(second.doc.metadata?.started_at).toBe(NOW.toISOString());
    expect((await fs.readdir(root)).sort()).toEqual(['20250301_120000', '20250301_120001']);
  });

  it('a portal that holds nothing of the target (404) is said in one info line, also in pipeline.log', async () => {
    server.handle((_req, _body, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'No session of this target' }));
    });
    const { infos, log, warnings } = await scan(path.join(dir, 'portal'), { portal: true });
    const line = `Portal state of ${TARGET}: nothing uploaded for this target yet; remediation uses the local session history`;
    expect(infos).toContain(line);
    expect(warnings).toEqual([]);
    expect(log).toMatch(new RegExp(`^\\S+Z info ${line.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'));
    expect(server.seen.at(-1)?.url).toMatch(/^\/api\/sessions\/latest-state\?target=10\.0\.0\.0%2F29/);
  });

  it("a host key the scanner's own script could not measure is a warning of the run, in pipeline.log too", async () => {
    const unmeasured = XML.replace(
      '<service name="ssh" method="table" conf="3"/></port>',
      '<service name="ssh" method="table" conf="3"/><script id="svc-ssh-host-keys" output="keys:"><table key="keys"></table>' +
        '<table key="unmeasured"><elem>rsa-sha2-512: no key after 3 tries</elem></table></script></port>',
    );
    expect(unmeasured).not.toBe(XML);
    await fs.writeFile(path.join(dir, 'unmeasured.xml'), unmeasured);
    const nmap = path.join(dir, 'nmap-unmeasured');
    await fs.writeFile(nmap, `#!/bin/sh\ncat '${path.join(dir, 'unmeasured.xml')}'\n`, { mode: 0o755 });
    const { warnings, log, path: sessionDir } = await scan(path.join(dir, 'unmeasured'), { nmap });
    const line =
      '10.0.0.6:22: SSH host key not measured (rsa-sha2-512: no key after 3 tries); its size was not checked';
    expect(warnings).toEqual([line]);
    expect(log).toContain(` stage nmap not checked ${line}\n`);
    // The session says so too: the next merge keeps a weak host key finding of that port open.
    const session = JSON.parse(await fs.readFile(path.join(sessionDir, 'session_results.json'), 'utf8'));
    expect(session.coverage.not_checked).toEqual([
      {
        host: '10.0.0.6',
        port: 22,
        protocol: 'tcp',
        rules: ['ssh-weak-host-key'],
        reason: 'SSH host key not measured (rsa-sha2-512: no key after 3 tries); its size was not checked',
      },
    ]);
  });

  it("nmap's own warnings are warnings of the run, in pipeline.log too", async () => {
    const nmap = path.join(dir, 'nmap-warns');
    await fs.writeFile(
      nmap,
      `#!/bin/sh\necho 'Failed to resolve "gone.invalid".' >&2\necho 'Starting Nmap' >&2\ncat '${path.join(dir, 'run.xml')}'\n`,
      { mode: 0o755 },
    );
    const { warnings, log } = await scan(path.join(dir, 'warns'), { nmap });
    expect(warnings).toEqual(['nmap: Failed to resolve "gone.invalid".']);
    expect(log).toContain(' stage nmap warning Failed to resolve "gone.invalid".\n');
    expect(log).not.toContain('Starting Nmap');
  });
});
