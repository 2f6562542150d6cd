import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import type net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildNmapArgs, PROFILES, parseTargets, writeOwnScripts } from '@svc/client/engine';
import { findNmap } from '@svc/client/kit';
import { scannerSessionId } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { runCli, SVC, tempHome } from '@svc/test-support/cli';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { listenOldSshBanner } from './helpers/ssh-banner.ts';

/**
 * nmap XML from a real nmap run (loopback only: one port the test opens on 127.0.0.1), run with
 * the arguments `svc scan` gives nmap, then imported: the same findings as `svc scan` of the same
 * port, under the same target, so the import continues the scan's remediation history.
 */

interface Out {
  path: string;
  session_id: string;
}
interface Doc {
  metadata: Record<string, unknown>;
  findings: { fingerprint: string; title: string; rule_id: string }[];
  remediation: { title: string; status: string; first_seen: string }[];
}

const fixture = usePortalWithKey({ tier: 'business' });
let server: net.Server;
let port: number;
let work: string;

beforeAll(async () => {
  ({ server, port } = await listenOldSshBanner());
  work = await tempHome();
});
afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (work) await fs.rm(work, { recursive: true, force: true });
});

async function svc(args: string[]): Promise<{ out: Out; doc: Doc }> {
  const r = await runCli(SVC, [...args, '--sessions-dir', path.join(work, 'sessions'), '--json'], {
    // The portal resolves the license tier (remediation needs one); nothing is uploaded.
    env: { CONSULTATION_API_URL: fixture.uploadUrl, SVC_API_KEY: fixture.key },
    timeoutMs: 3 * 60_000,
  });
  expect(r.code, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout) as Out;
  return { out, doc: JSON.parse(await fs.readFile(path.join(out.path, 'session_results.json'), 'utf8')) as Doc };
}

/** nmap as `svc scan` runs it (same profile, privilege and port list), its XML written to a file. */
async function nmapToFile(file: string): Promise<void> {
  const nmap = findNmap(process.env);
  if (nmap === undefined) throw new Error('nmap is not installed');
  const scripts = await writeOwnScripts(PROFILES.quick_recon.ownScripts);
  onTestFinished(scripts.remove);
  const args = buildNmapArgs(PROFILES.quick_recon, parseTargets('127.0.0.1', null), {
    privileged: process.getuid?.() === 0,
    ports: `T:${port}`,
    scriptDir: scripts.dir,
  });
  const xml = await new Promise<string>((resolve, reject) => {
    const child = spawn(nmap, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`nmap exit ${code}: ${err}`))));
  });
  await fs.writeFile(file, xml);
}

describe('an nmap run from elsewhere, imported', () => {
  it('gives the findings of svc scan and continues its history', { timeout: 6 * 60_000 }, async () => {
    const scan = await svc(['scan', '--targets', '127.0.0.1', '--ports', `T:${port}`, '--no-tools']);
    expect(scan.doc.findings.length).toBeGreaterThan(0);
    const file = path.join(work, 'elsewhere.xml');
    await nmapToFile(file);
    for (let i = 0; i < 100 && scannerSessionId(new Date()) <= scan.out.session_id; i++) await sleep(25);
    const imported = await svc(['import', file]);
    const key = (d: Doc) => d.findings.map((f) => `${f.rule_id} ${f.fingerprint} ${f.title}`).sort();
    expect(key(imported.doc)).toEqual(key(scan.doc));
    expect(imported.doc.metadata).toMatchObject({ target: '127.0.0.1', scan_profile: 'import:nmap' });
    expect(imported.doc.metadata['target']).toBe(scan.doc.metadata['target']);
    expect(imported.doc.remediation.map((e) => [e.status, e.first_seen])).toEqual(
      scan.doc.remediation.map(() => ['persistent', scan.out.session_id]),
    );
  });
});
