import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runCli, SVC, tempHome } from '@svc/test-support/cli';
import { loadFixture } from '@svc/test-support/upload';
import { FORMATS } from '../src/imports/common.ts';

/**
 * `svc upload` of a file that is neither a session file nor a format
 * `svc import` reads is refused on the host, naming the file and what was expected, exit 2,
 * and nothing leaves the host. The upload URL is a real HTTP listener on the loopback that
 * records every connection and request: it must see none. It does see the uploads that go
 * ahead (a session file, an nmap XML report to import), which proves it would have noticed.
 */

let server: http.Server;
let connections = 0;
const requests: string[] = [];
let work: string;
let url: string;

beforeAll(async () => {
  work = await tempHome();
  server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url?.split('?')[0]}`);
    req.resume();
    req.on('end', () => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'Invalid API key' }));
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/upload`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  if (work) await fs.rm(work, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({
  CONSULTATION_API_URL: url,
  SVC_API_KEY: `svc_biz_${'ab'.repeat(32)}`,
  SVC_SESSIONS_DIR: path.join(work, 'sessions'),
  ...extra,
});

async function write(name: string, data: string | Buffer): Promise<string> {
  const file = path.join(work, name);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, data);
  return file;
}

/** `svc upload <file>` with the listener as the portal; resolves with what the listener saw meanwhile. */
async function upload(file: string, extra: Record<string, string> = {}) {
  const before = { connections, requests: requests.length };
  const r = await runCli(SVC, ['upload', file, '--no-benchmark'], { env: env(extra) });
  return { ...r, connections: connections - before.connections, requests: requests.slice(before.requests) };
}

const expected = (file: string, problem: string) =>
  problem === 'is empty'
    ? `error: ${file} is empty: neither a session file nor a scan to import. An empty Nuclei output (a run without ` +
      `results) is imported as a clean run with \`svc import ${file} --targets <what it scanned> --upload\`; nothing was sent\n`
    : `error: ${file} is neither a session file nor a file svc imports: it ${problem}. Expected a session directory, ` +
      `session_results.json (a JSON object with metadata.session_id, docs/session-file.md) or a file \`svc import\` reads ` +
      `(${FORMATS.join(', ')}: docs/cli/import.md); nothing was sent\n`;

/** V8's words for text that is not JSON, as the CLI's JSON.parse gives them. */
const parseError = (text: string): string => {
  try {
    JSON.parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the text is JSON');
};

describe('svc upload of a file that is no scan', () => {
  it.each([
    [
      'plain text (a log)',
      'pipeline.log',
      'scan finished: 3 hosts up\n',
      () => `is not JSON (${parseError('scan finished: 3 hosts up\n')})`,
    ],
    ['an empty file', 'empty.json', '', () => 'is empty'],
    ['white space only', 'blank.json', ' \n\t\n', () => 'is empty'],
    [
      'a JSON array',
      'array.json',
      '[{"metadata":{"session_id":"20260301_120000"}}]',
      () => 'is an array, not a JSON object',
    ],
    ['a JSON string', 'string.json', '"20260301_120000"', () => 'is a string, not a JSON object'],
    ['JSON null', 'null.json', 'null', () => 'is null, not a JSON object'],
    [
      'an object without a session id',
      'meta.json',
      '{"metadata":{"target":"10.0.0.0/24"}}',
      () => 'has no metadata.session_id',
    ],
    [
      'an object whose session id is a path',
      'traversal.json',
      '{"metadata":{"session_id":"../etc"}}',
      () => 'has the session id "../etc", which is not one (^[a-zA-Z0-9_-]+$, at most 128 characters)',
    ],
  ])('%s: refused on the host, exit 2, no connection', async (_what, name, text, problem) => {
    const file = await write(name, text);
    const r = await upload(file);
    expect(r.stderr).toBe(expected(file, problem()));
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.connections).toBe(0);
    expect(r.requests).toEqual([]);
  });

  it("real files of other kinds: a ZAP XML report, DefectDojo's generic findings JSON, a PNG image", async () => {
    const zap = path.join(import.meta.dirname, 'fixtures/not-a-scan/zap_5_zap_sample_one.xml');
    const dojo = path.join(REPO, 'packages/protocol/tests/fixtures/defectdojo/generic_cve_and_vulnerability_ids.json');
    const png = path.join(REPO, 'docs/report-screenshot.png');
    const zapText = await fs.readFile(zap, 'utf8');
    for (const [file, problem] of [
      [zap, `is not JSON (${parseError(zapText)})`],
      [dojo, 'has no metadata.session_id'],
      [png, 'is binary data, not JSON text'],
    ] as const) {
      const r = await upload(file);
      expect(r.stderr, file).toBe(expected(file, problem));
      expect(r.code, file).toBe(2);
      expect([r.connections, r.requests], file).toEqual([0, []]);
    }
  });

  it('a session file cut short (a copy interrupted) is not JSON: refused, nothing sent', async () => {
    const whole = JSON.stringify(loadFixture('session-complete.json'), null, 2);
    const cut = whole.slice(0, Math.floor(whole.length / 2));
    const file = await write('cut/session_results.json', cut);
    const r = await upload(file);
    expect(r.stderr).toBe(expected(file, `is not JSON (${parseError(cut)})`));
    expect([r.code, r.connections, r.requests]).toEqual([2, 0, []]);
  });

  it('a session directory whose session_results.json is no session: refused naming that file', async () => {
    const dir = path.join(work, 'dir-session');
    const file = await write('dir-session/session_results.json', '{"findings": []}');
    await write('dir-session/pipeline.log', 'scan finished\n');
    const r = await upload(dir);
    expect(r.stderr).toBe(
      `error: ${file} is not a session file: it has no metadata.session_id. Expected a JSON object with metadata.session_id (docs/session-file.md); nothing was sent\n`,
    );
    expect([r.code, r.connections, r.requests]).toEqual([2, 0, []]);
  });

  it('over the upload limit: text that cannot start a JSON object is named from its first bytes', async () => {
    const file = await write('big.txt', 'x'.repeat(1024 * 1024 + 1));
    const r = await upload(file, { SVC_UPLOAD_MAX_MB: '1' });
    expect(r.stderr).toBe(expected(file, 'is not a JSON object (it starts with "x")'));
    expect([r.code, r.connections, r.requests]).toEqual([2, 0, []]);
  });

  it('over the upload limit and starting like a JSON object: the size check refuses it, exit 1, nothing sent', async () => {
    const doc = loadFixture('session-minimal.json');
    const file = await write('big.json', JSON.stringify({ ...doc, padding: 'x'.repeat(1024 * 1024) }));
    const r = await upload(file, { SVC_UPLOAD_MAX_MB: '1' });
    expect(r.stderr).toMatch(/^error: Upload not sent: the request would be \d+ bytes/);
    expect([r.code, r.connections, r.requests]).toEqual([1, 0, []]);
  });
});

describe('svc upload of what it takes still sends it (the listener sees it)', () => {
  it('a session file: one POST /api/upload, and the portal’s refusal is exit 1', async () => {
    const file = await write('ok/session_results.json', JSON.stringify(loadFixture('session-minimal.json')));
    const r = await upload(file);
    expect(r.stderr).toBe('error: Upload refused: HTTP 403 Invalid API key\n');
    expect(r.code).toBe(1);
    expect(r.requests).toEqual(['POST /api/upload']);
  });

  it('a session file with a byte-order mark, as the portal reads it', async () => {
    const file = await write(
      'bom/session_results.json',
      `\uFEFF${JSON.stringify(loadFixture('session-minimal.json'))}`,
    );
    const r = await upload(file);
    expect(r.code).toBe(1);
    expect(r.requests).toEqual(['POST /api/upload']);
  });

  it('an nmap XML report is imported on the host, then uploaded', async () => {
    const nmap = path.join(import.meta.dirname, 'fixtures/nmap/real-lab-odd-ports.xml');
    const r = await upload(nmap);
    expect(r.stderr).not.toContain('is neither a session file');
    expect(r.stderr).toContain('error: Upload failed: HTTP 403 Invalid API key (the session is in ');
    expect(r.code).toBe(1);
    expect(r.requests).toContain('POST /api/upload');
  });
});
