import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayFile, sessionDirFiles } from '../src/session-dir/display-files.ts';

describe('the display files of a session directory: one rule for upload and the benchmark step', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-display-files-'));
    await fs.writeFile(path.join(dir, 'session_results.json'), '{}');
    // The alphabetically first name is the older file: a client renamed since that run.
    for (const [name, at] of [
      ['report_acme.html', 1_000],
      ['report_zeta.html', 2_000],
      ['exec_summary_acme.html', 3_000],
      ['exec_summary_zeta.html', 1_000],
    ] as const) {
      await fs.writeFile(path.join(dir, name), name);
      await fs.utimes(path.join(dir, name), at, at);
    }
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it('the newest of each kind, whatever its name', () => {
    expect(displayFile(dir, 'report_')).toBe(path.join(dir, 'report_zeta.html'));
    expect(displayFile(dir, 'exec_summary_')).toBe(path.join(dir, 'exec_summary_acme.html'));
    const files = sessionDirFiles(dir);
    expect([files?.report, files?.exec]).toEqual([displayFile(dir, 'report_'), displayFile(dir, 'exec_summary_')]);
  });

  it('none of a kind: null; no session file: no session directory', async () => {
    const empty = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-display-files-'));
    try {
      expect(displayFile(empty, 'report_')).toBeNull();
      expect(sessionDirFiles(empty)).toBeNull();
    } finally {
      await fs.rm(empty, { recursive: true, force: true });
    }
  });
});
