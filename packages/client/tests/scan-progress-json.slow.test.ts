import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { readProgressLine } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, SVC, type CliResult } from '@svc/test-support/cli';
import { progressJsonWriter } from '../src/cli/progress-json.ts';
import { NmapXmlStream } from '../src/scanner/parse/stream.ts';

/**
 * `svc scan --progress-json`: nmap's progress as JSON lines on stderr for a caller
 * that is not a terminal (svcd). A real nmap scans one loopback port the test opens; the port
 * accepts and never speaks, so nmap's service scan waits on it for several seconds (its probes
 * time out) and, with `--stats-every 1`, reports its progress while it does.
 */

const PROGRESS_LINE =
  /^\{"progress":\{"task":"[^"\n]{1,64}","percent":\d{1,3}(\.\d{1,2})?,"stage":"(discovery|nmap|enrichment|session|upload)"\}\}$/;

let dir: string;
let silent: net.Server;
let port: number;
let run: CliResult;
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-progress-json-'));
  silent = net.createServer((s) => {
    s.on('error', () => {});
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  port = (silent.address() as net.AddressInfo).port;
  run = await runCli(
    SVC,
    ['scan', '--targets', '127.0.0.1', '--ports', `T:${port}`, '--no-tools', '--sessions-dir', dir].concat([
      '--progress-json',
      '--stats-every',
      '1',
      '--json',
    ]),
    { timeoutMs: 4 * 60_000 },
  );
}, 5 * 60_000);

afterAll(async () => {
  // The listener never hangs up on its own: what nmap left open is closed here.
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('svc scan --progress-json against a real nmap on 127.0.0.1', () => {
  it('writes progress lines on stderr in the protocol shape, the service scan among them', () => {
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split('\n').filter((l) => l.startsWith('{"progress"'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).toMatch(PROGRESS_LINE);
      const progress = readProgressLine(line);
      expect(progress).not.toBeNull();
      expect(progress?.percent).toBeGreaterThanOrEqual(0);
      expect(progress?.percent).toBeLessThanOrEqual(100);
    }
    expect(lines.map((l) => readProgressLine(l)?.task)).toContain('Service scan');
  });

  it("names the pipeline's stage in each line: nmap's own reports, then the session", () => {
    const progress = run.stderr
      .split('\n')
      .filter((l) => l.startsWith('{"progress"'))
      .map((l) => readProgressLine(l));
    // No discovery or enrichment tool runs (--no-tools), and nothing is uploaded.
    const stages = progress.map((p) => p?.stage).filter((s, i, all) => s !== all[i - 1]);
    expect(stages).toEqual(['nmap', 'session']);
    expect(progress[0]).toEqual({ task: 'Starting nmap', percent: 0, stage: 'nmap' });
    expect(progress.at(-1)).toEqual({ task: 'Writing the session and its report', percent: 0, stage: 'session' });
  });

  it('passes --stats-every to nmap (pipeline.log holds the command)', async () => {
    const answer = JSON.parse(run.stdout) as { path: string };
    const log = await fs.readFile(path.join(answer.path, 'pipeline.log'), 'utf8');
    expect(log).toContain(' --stats-every 1s -oX - -- 127.0.0.1');
  });

  it('leaves stdout alone: the one --json answer, as without the option', () => {
    const answer = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(Object.keys(answer)).toEqual(['path', 'session_id', 'summary']);
    expect(answer['path']).toBe(path.join(dir, answer['session_id'] as string));
    expect(run.stdout.trim().split('\n')[0]).toBe('{');
  });

  it('keeps the other stderr lines as they were', () => {
    const others = run.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('{"progress"'));
    expect(others.some((l) => l.startsWith('nmap: '))).toBe(true);
    expect(others.filter((l) => l.startsWith('{'))).toEqual([]);
  });
});

describe('svc scan without --progress-json on a pipe', () => {
  it('writes no progress lines', async () => {
    const r = await runCli(
      SVC,
      [
        'scan',
        '--targets',
        '127.0.0.1',
        '--ports',
        `T:${port}`,
        '-P',
        'discovery',
        '--no-tools',
        '--stats-every',
        '1',
      ].concat(['--sessions-dir', dir, '--json']),
      { timeoutMs: 2 * 60_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('{"progress"'))).toEqual([]);
  });

  it('refuses a --stats-every outside 1-3600 before nmap starts (exit 2)', async () => {
    for (const value of ['0', '3601', '1.5', 'soon']) {
      const r = await runCli(SVC, ['scan', '--targets', '127.0.0.1', '--sessions-dir', dir, '--stats-every', value]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('error: --stats-every must be a whole number of seconds from 1 to 3600\n');
    }
  });
});

describe('the progress line writer with the XML nmap writes', () => {
  it("turns nmap's <taskprogress> into one line each, in the protocol shape", () => {
    const written: string[] = [];
    const stream = { write: (s: string) => written.push(s) } as unknown as NodeJS.WritableStream;
    const parser = new NmapXmlStream({ onHost: () => {}, onProgress: progressJsonWriter(stream) });
    // nmap 7.93's own lines (a run of this file's scan), the last one with its remaining/etc.
    parser.write(
      Buffer.from(
        '<?xml version="1.0" encoding="UTF-8"?>\n<nmaprun scanner="nmap" args="nmap" start="1795931273" version="7.93" xmloutputversion="1.05">\n' +
          '<taskprogress task="SYN Stealth Scan" time="1795931274" percent="45.20" remaining="2" etc="1795931276"/>\n' +
          '<taskprogress task="Service scan" time="1795931279" percent="0.00"/>\n' +
          '<taskprogress task="Service scan" time="1795931299" percent="100.00" remaining="0" etc="1795931299"/>\n',
      ),
    );
    expect(written).toEqual([
      '{"progress":{"task":"SYN Stealth Scan","percent":45.2,"stage":"nmap"}}\n',
      '{"progress":{"task":"Service scan","percent":0,"stage":"nmap"}}\n',
      '{"progress":{"task":"Service scan","percent":100,"stage":"nmap"}}\n',
    ]);
  });
});
