import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { findingFingerprint } from '@svc/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, withToken } from '@svc/test-support/http';
import { type Netlab, startNetlab } from '@svc/test-support/netlab';
import { assertInTestNetwork, scannerTools } from '@svc/test-support/netlab/scanner-tools';
import { bannerServer } from '@svc/test-support/netlab/services';
import { finishedCommand, queueCommand } from './helpers/agent-admin.ts';
import { type PortalWithKey, startPortalWithKey } from './helpers/portal-with-key.ts';
import { portalConf, type SvcdProcess, startSvcd, untilRegistered } from '@svc/test-support/svcd';

/**
 * The triage loop an agent fleet lives in, for real: a real portal, a real `svcd` whose `svc scan`
 * children run nmap inside the test network's scanner namespace (an `nmap` on the daemon's PATH
 * that enters it), and the portal as the system of record. Scan 1 (a run_scan command) uploads;
 * in the portal one finding goes in_progress with a note, one gets a risk exception expiring
 * tomorrow, one is deferred; on the test network the FTP server stops and an old OpenSSH banner
 * starts; scan 2 (run_scan again) must honour the triage and tell removed from new. Then the same
 * agent, state directory and all, is moved to a second fresh portal and runs its command 1.
 * Needs root; nothing outside the harness subnet and loopback is contacted.
 */

interface Remediation {
  fingerprint: string;
  title: string;
  host: string;
  status: string;
  note?: string;
  first_seen: string;
  exception_status?: string;
  exception_reason?: string;
  exception_expiry?: string | null;
}
interface Doc {
  metadata: { session_id: string; risk_score: number; risk_score_operational: number };
  findings: { fingerprint: string; rule_id: string; host: string; port: number; severity: string }[];
  remediation: Remediation[];
  remediation_resolved: (Remediation & { prior_status: string })[];
  summary: { risk_score: number; risk_score_operational: number };
}

let lab: Netlab;
let first: PortalWithKey;
let work: string;
let daemon: SvcdProcess;
let legacy: string;
let data: string;
const docs: Doc[] = [];

const fp = (rule_id: string, host: string, port: number, protocol = 'tcp') =>
  findingFingerprint({ rule_id, host, port, protocol });
/** Fixed once: a run that crosses midnight UTC still compares the same day. */
const TOMORROW = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

async function agentOn(portal: PortalWithKey, reuse?: SvcdProcess): Promise<SvcdProcess> {
  const d = await startSvcd({
    ...(reuse ? { agentId: reuse.agentId, home: reuse.home, configDir: reuse.configDir } : { home: work }),
    configs: { 'a-portal.conf': portalConf(portal.uploadUrl, portal.key) },
    // Every `nmap` and `snmpwalk` the daemon's scans start enters the scanner namespace first.
    env: { PATH: `${path.join(work, 'bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}` },
  });
  await d.waitFor(/msg="svcd started"/);
  await untilRegistered(portal.portal, d.agentId);
  return d;
}

/** One run_scan command with upload; returns the session as the portal stores it. */
async function scanThroughAgent(): Promise<Doc> {
  const id = await queueCommand(first.portal, daemon.agentId, 'run_scan', {
    targets: `${legacy},${data}`,
    profile: 'quick',
    upload: true,
  });
  const h = await finishedCommand(first.portal, id, 6 * 60_000);
  expect(h.command.status, JSON.stringify(h.result)).toBe('completed');
  const sessionId = h.result?.session_id;
  expect(sessionId).toMatch(/^\d{8}_\d{6}/);
  const res = await http(first.portal.url, 'GET', `/api/download?session=${sessionId}&client_id=${first.clientId}`, {
    headers: withToken(await first.portal.adminToken()),
  });
  expect(res.status, res.text).toBe(200);
  return (typeof res.body === 'string' ? JSON.parse(res.body) : res.body) as Doc;
}

const POSTGRES = () => fp('database-exposed', data, 5432);
const REDIS = () => fp('redis-unauthenticated', data, 6379);
const MEMCACHED = () => fp('memcached-unauthenticated', data, 11211);
const NOTE = 'CHG-1187: PostgreSQL behind the VPN after the vendor window';

beforeAll(async () => {
  [lab, first] = await Promise.all([startNetlab({ smb: false }), startPortalWithKey({ tier: 'business' })]);
  legacy = lab.hosts.legacy.ip;
  data = lab.hosts.data.ip;
  // inetutils telnetd opens with an encryption offer no nmap signature names, so version detection
  // waits out every probe on it (about 45 s a scan); the triage here needs no telnet.
  await lab.stopService('legacy', 'telnetd');
  assertInTestNetwork([legacy, data]);
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-triage-loop-'));
  // nmap and the one optional tool these hosts call for (snmpwalk, on the legacy host's SNMP).
  await scannerTools(lab.wrapper, path.join(work, 'bin'), ['nmap', 'snmpwalk']);
  daemon = await agentOn(first);
}, 3 * 60_000);

afterAll(async () => {
  await daemon?.stop();
  lab?.stop();
  await first?.close();
  if (work) await fs.rm(work, { recursive: true, force: true });
});

describe('triage made in the portal carries into the next agent scan', () => {
  it('scan 1 (run_scan) uploads the planted weaknesses, all new', { timeout: 8 * 60_000 }, async () => {
    docs.push(await scanThroughAgent());
    const doc = docs[0]!;
    const fps = new Set(doc.remediation.map((r) => r.fingerprint));
    for (const f of [POSTGRES(), REDIS(), MEMCACHED(), fp('ftp-anonymous', legacy, 21)]) expect(fps).toContain(f);
    expect(doc.remediation.every((r) => r.status === 'new')).toBe(true);
    expect(doc.summary.risk_score_operational).toBe(doc.summary.risk_score);
  });

  it('the portal takes the triage: in_progress with a note, an exception until tomorrow, deferred', async () => {
    const res = await http(first.portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(await first.portal.adminToken()),
      json: {
        session_id: docs[0]!.metadata.session_id,
        client_id: first.clientId,
        items: [
          { fingerprint: POSTGRES(), status: 'in_progress', note: NOTE },
          { fingerprint: REDIS(), exception: { reason: 'Isolated lab VLAN', expiry: TOMORROW } },
          { fingerprint: MEMCACHED(), status: 'deferred' },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: { matched: number }) => r.matched)).toStrictEqual([1, 1, 1]);
  });

  it('scan 2 (run_scan) honours it; the stopped FTP server is resolved, the planted old OpenSSH is new', {
    timeout: 8 * 60_000,
  }, async () => {
    await lab.stopService('legacy', 'vsftpd');
    // Port 22 is in the quick profile's list and free on the legacy host.
    await lab.startService('legacy', { ...bannerServer(legacy, 22, 'SSH-2.0-OpenSSH_7.4'), name: 'banner-old-ssh' });
    docs.push(await scanThroughAgent());
    const [one, two] = docs as [Doc, Doc];
    expect(two.metadata.session_id > one.metadata.session_id).toBe(true);
    const byFp = new Map(two.remediation.map((r) => [r.fingerprint, r]));

    expect(byFp.get(POSTGRES())).toMatchObject({
      status: 'in_progress',
      note: NOTE,
      first_seen: one.metadata.session_id,
    });
    expect(byFp.get(REDIS())).toMatchObject({
      exception_status: 'accepted',
      exception_reason: 'Isolated lab VLAN',
      exception_expiry: TOMORROW,
    });
    expect(byFp.get(MEMCACHED())?.status).toBe('deferred');
    expect(two.summary.risk_score_operational).toBeLessThan(two.summary.risk_score);

    const ftp = [fp('ftp-anonymous', legacy, 21), fp('ftp-cleartext', legacy, 21)];
    expect(two.remediation_resolved.map((r) => r.fingerprint).sort()).toStrictEqual([...ftp].sort());
    for (const r of two.remediation_resolved) expect(r).toMatchObject({ status: 'resolved', prior_status: 'new' });

    const planted = two.findings.filter((f) => f.host === legacy && f.port === 22);
    expect(planted.length).toBeGreaterThan(0);
    expect(planted.every((f) => f.rule_id.startsWith('outdated-software:openssh-'))).toBe(true);
    for (const f of planted) expect(byFp.get(f.fingerprint)?.status).toBe('new');
    // Everything else seen before and not triaged is persistent.
    const apart = new Set([POSTGRES(), REDIS(), MEMCACHED(), ...planted.map((f) => f.fingerprint)]);
    for (const r of two.remediation.filter((e) => !apart.has(e.fingerprint)))
      expect(r.status, `${r.title} ${r.host}`).toBe('persistent');
  });

  it('the same agent moved to a second, fresh portal runs that portal command 1', { timeout: 3 * 60_000 }, async () => {
    const second = await startPortalWithKey({ tier: 'business' });
    try {
      await daemon.stop();
      daemon = await agentOn(second, daemon);
      const id = await queueCommand(second.portal, daemon.agentId, 'set_log_level', { level: 'debug' });
      expect(id).toBe(1);
      const h = await finishedCommand(second.portal, id, 60_000);
      expect(h).toMatchObject({ command: { status: 'completed' }, result: { exit_code: 0 } });
      expect(daemon.output()).not.toContain('delivered again');
    } finally {
      await daemon.stop();
      await second.close();
    }
  });
});
