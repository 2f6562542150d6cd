import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { writeState } from '../src/state-file.ts';
import { formatStatus } from '../src/status.ts';

/** Terminal safety of remote text in what svcd prints (the rule itself: packages/client/tests/printable.test.ts). */

const OSC_TITLE = '\u001b]0;pwned\u0007';
const OSC_52 = '\u001b]52;c;ZXZpbA==\u001b\\';
const CSI = '\u001b[2J\u001b[1;1H';
const C1 = '\u009b2K\u009d0;t\u009c';
const HOSTILE = `${OSC_TITLE}${OSC_52}${CSI}${C1}\u0007\u0008\u007f`;
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

function capture(tty: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY: tty });
  let text = '';
  stream.on('data', (b: Buffer) => {
    text += b.toString();
  });
  return { stream, text: () => text };
}

describe('svcd', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-printable-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('log values with C1 controls or DEL are quoted with them escaped', () => {
    const out = capture(false);
    createLogger(out.stream, {}, 'info').warning(`heartbeat failed${C1}`, { error: `x\u009b2J\u007f` });
    expect(out.text()).not.toMatch(CONTROL);
    expect(out.text()).toMatch(/ msg="heartbeat failed\\u009b2K\\u009d0;t\\u009c" error="x\\u009b2J\\u007f"\n$/);
  });

  it('status shows the last error without escapes, as text and as JSON', () => {
    writeState(dir, {
      agent_id: 'svcd_test0001',
      pid: 2 ** 22 + 1,
      portal: 'https://portal.example/api/upload',
      tier: 'business',
      config_dir: '/etc/svc/configs',
      log_level: 'info',
      started_at: '2026-01-01T00:00:00.000Z',
      last_heartbeat: '2026-01-01T00:05:00.000Z',
      last_heartbeat_ok: false,
      last_error: `HTTP 500 ${HOSTILE}boom`,
      schedules: [],
    });
    const text = formatStatus(dir, false).text;
    expect(text).not.toMatch(CONTROL);
    expect(text).toContain('(failed: HTTP 500 boom)');
    const json = formatStatus(dir, true).text;
    expect(json).not.toMatch(CONTROL);
    expect(JSON.parse(json).last_error).toBe(`HTTP 500 ${HOSTILE}boom`);
  });
});
