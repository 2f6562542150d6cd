import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../src/cli/main.ts';
import { Settings } from '../src/kit/config/settings.ts';
import { ScanUploadError, uploadProduced } from '../src/upload/produced-upload.ts';
import { capturedContext } from './helpers/captured-cli.ts';
import { type RecordingServer, startRecordingServer } from './helpers/recording-server.ts';

/**
 * What `svc upload` (and the uploads of `svc scan --upload`) say the portal did: the findings of
 * record it merged, and a refusal when the session id is held by another target of the client.
 * Against a real node:http server on 127.0.0.1 answering as the portal does.
 */

const KEY = `svc_biz_${'ab'.repeat(32)}`;
const SESSION = '20250301_140000';
let server: RecordingServer;
let dir: string;
let sessionFile: string;

beforeAll(async () => {
  server = await startRecordingServer();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-upload-outcome-'));
  sessionFile = path.join(dir, 'session_results.json');
  await fs.writeFile(
    sessionFile,
    JSON.stringify({ metadata: { session_id: SESSION, target: '10.0.0.0/24' }, findings: [] }),
  );
});
afterAll(async () => {
  await server.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const answer = (status: number, body: unknown) =>
  server.handle((_req, _body, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });

async function svcUpload(): Promise<{ code: number; stdout: string; stderr: string }> {
  const { ctx, stdout, stderr } = capturedContext(dir);
  const code = await run(['upload', sessionFile, '-u', `${server.base}/api/upload`, '-k', KEY], ctx);
  return { code, stdout: stdout(), stderr: stderr() };
}

const CONFLICT = {
  error: `Session ${SESSION} is already held by target 10.0.1.0/24 of this client`,
  conflict: 'session_target',
  target: '10.0.1.0/24',
};

describe('svc upload says what happened', () => {
  it("prints the portal's merge into the findings of record, and its message", async () => {
    answer(200, {
      success: true,
      session_id: SESSION,
      share_token: 'c'.repeat(64),
      share_url: `${server.base}/share/?token=${'c'.repeat(64)}`,
      message:
        'Session uploaded; findings of record: 2 new, 0 still open, 1 reopened, 3 resolved, 4 not checked by this scan',
      findings: { new: 2, persistent: 0, reopened: 1, resolved: 3, not_checked: 4 },
    });
    const r = await svcUpload();
    expect(r.code, r.stderr).toBe(0);
    // stdout stays the id and the link; what the portal made of the upload is on stderr.
    expect(r.stdout).toBe(`Uploaded session ${SESSION}\nShare URL: ${server.base}/share/?token=${'c'.repeat(64)}\n`);
    expect(r.stderr).toBe(
      'Findings of record: 2 new, 1 reopened, 3 resolved, 4 not checked by this scan\n' +
        'Portal: Session uploaded; findings of record: 2 new, 0 still open, 1 reopened, 3 resolved, 4 not checked by this scan\n',
    );
  });

  it('an older portal without the findings block: no findings line', async () => {
    answer(200, {
      success: true,
      session_id: SESSION,
      share_token: null,
      share_url: null,
      message: 'Session uploaded',
    });
    const r = await svcUpload();
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('Portal: Session uploaded\n');
  });

  it('a session id held by another target of the client: a refusal naming both targets, exit 1', async () => {
    answer(409, CONFLICT);
    const r = await svcUpload();
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `error: Upload refused: session ${SESSION} is already held on the portal by target "10.0.1.0/24" of this ` +
        'client, and this session scanned "10.0.0.0/24". The portal keeps one session per id and client and did ' +
        'not replace it; scan "10.0.0.0/24" again (a new scan takes a free id) and upload that session ' +
        `(portal: ${CONFLICT.error})\n`,
    );
  });

  it('svc scan --upload and svc import --upload fail with the same words, naming where the session is', async () => {
    answer(409, CONFLICT);
    const err = await uploadProduced({
      target: { uploadUrl: `${server.base}/api/upload`, apiKey: KEY, jwt: null, timeoutS: 5 },
      produced: { path: dir, files: ['session_results.json'] },
      tier: 'business',
      settings: new Settings({ env: {} }),
      warn: () => {},
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ScanUploadError);
    expect((err as Error).message).toMatch(
      new RegExp(
        `^Upload refused: session ${SESSION} is already held on the portal by target "10\\.0\\.1\\.0/24" .* \\(the session is in ${dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)$`,
      ),
    );
  });
});
