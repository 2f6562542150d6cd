import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { findingFingerprint, toCsv, toDefectDojo, toSarif } from '@svc/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runCli, SVC } from '@svc/test-support/cli';

/** `svc export`: the protocol's exports of a session directory or file, to stdout or a file. */

const FP = findingFingerprint({ rule_id: 'telnet-open', host: '10.0.0.7', port: 23, protocol: 'tcp' });
const doc = {
  metadata: { session_id: '20260301_120000', client_id: 'acme', target: '10.0.0.0/24' },
  findings: [
    {
      id: 'f-1',
      rule_id: 'telnet-open',
      title: 'Telnet service',
      severity: 'medium',
      host: '10.0.0.7',
      port: 23,
      protocol: 'tcp',
      remediation: '+disable telnet',
    },
    { id: 'f-2', title: 'Host-level note', severity: 'info' },
  ],
  remediation: [
    {
      title: 'Telnet service',
      fingerprint: FP,
      status: 'persistent',
      exception_status: 'accepted',
      exception_reason: 'PLC',
      exception_expiry: '2099-12-31',
    },
  ],
};

describe('svc export', () => {
  let dir: string;
  let version: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-export-'));
    await fs.mkdir(path.join(dir, 'session'));
    await fs.writeFile(path.join(dir, 'session', 'session_results.json'), JSON.stringify(doc));
    await fs.writeFile(path.join(dir, 'broken.json'), '{"findings": [');
    version = (
      JSON.parse(await fs.readFile(path.join(REPO, 'packages/client/package.json'), 'utf8')) as { version: string }
    ).version;
  });
  afterAll(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('writes the CSV of a session directory to stdout, exactly the shared converter’s text', async () => {
    const r = await runCli(SVC, ['export', path.join(dir, 'session'), '--format', 'csv']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(toCsv(doc));
    expect(r.stdout.split('\r\n')[1]).toContain(`${FP},20260301_120000,f-1,telnet-open,Telnet service,medium,`);
    expect(r.stdout).toContain(",'+disable telnet,");
  });

  it('writes SARIF and DefectDojo JSON of a session file to --output', async () => {
    const file = path.join(dir, 'session', 'session_results.json');
    const sarifOut = path.join(dir, 'out.sarif');
    const r = await runCli(SVC, ['export', file, '--format', 'sarif', '--output', sarifOut]);
    expect(r).toEqual({ code: 0, stdout: '', stderr: `wrote ${sarifOut}\n` });
    expect(await fs.readFile(sarifOut, 'utf8')).toBe(toSarif(doc, { toolVersion: version }));

    const dojoOut = path.join(dir, 'out.json');
    const d = await runCli(SVC, ['export', file, '-f', 'defectdojo', '-o', dojoOut]);
    expect(d.code).toBe(0);
    const text = await fs.readFile(dojoOut, 'utf8');
    expect(text).toBe(toDefectDojo(doc, { toolVersion: version }));
    expect(JSON.parse(text).findings[0]).toMatchObject({ unique_id_from_tool: FP, risk_accepted: true, active: false });
    expect((await fs.readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('exit 2 for an unknown format or a missing session, 1 for a file that is not JSON', async () => {
    const bad = await runCli(SVC, ['export', path.join(dir, 'session'), '--format', 'xlsx']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown format "xlsx": use one of csv, sarif, defectdojo');
    expect(bad.stdout).toBe('');
    const missing = await runCli(SVC, ['export', path.join(dir, 'nope'), '--format', 'csv']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${path.join(dir, 'nope')} does not exist`);
    const noFormat = await runCli(SVC, ['export', path.join(dir, 'session')]);
    expect(noFormat.code).toBe(2);
    const broken = await runCli(SVC, ['export', path.join(dir, 'broken.json'), '--format', 'sarif']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('is not a readable session file');
    expect(broken.stdout).toBe('');
  });
});
