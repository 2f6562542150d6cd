import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tool } from '@svc/test-support/cli';
import { startPty, type PtySession } from './helpers/pty.ts';

/** The progress bar of synthetic_collection.sh: on a terminal only (the piped runs of synthetic-collection.test.ts show none). */

let work: string;
let pty: PtySession | undefined;
beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-synthetic-progress-'));
});
afterEach(async () => {
  await pty?.close();
  pty = undefined;
});
afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
});

describe('synthetic_collection.sh on a terminal', () => {
  it('draws a progress bar over the sessions on stderr, and still prints the directories and the summary', async () => {
    pty = await startPty(
      [tool('synthetic_collection.sh'), '--target', '10.0.0.0/24', '--sessions', '6', '--seed', '3', '-o', work],
      { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: work, LANG: 'C.UTF-8' },
      { width: 160 },
    );
    expect(await pty.exitCode(120_000)).toBe(0);
    const screen = await pty.capture();
    expect(screen).toMatch(/^={30} 6\/6 sessions \(100%/m);
    expect(screen).toContain(path.join(work, '20250106_020000'));
    expect(screen).toMatch(/Created 6 synthetic sessions for 10\.0\.0\.0\/24/);
  });
});
