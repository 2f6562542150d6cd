import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { C1, CONTROL, capture, HOSTILE } from '@svc/test-support/terminal-text';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.ts';
import { writeState } from '../src/state-file.ts';
import { formatStatus } from '../src/status.ts';

/** Terminal safety of remote text in what svcd prints (the rule itself: packages/client/tests/printable.test.ts). */

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
