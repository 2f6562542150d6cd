import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSessionIds } from '../src/kit/session-dir/history.ts';
import { writeSessionDir } from '../src/session-dir/write.ts';
import { REPO } from '@svc/test-support/cli';

/**
 * SIGKILL a real writer process at each step of the write, and at moments in between, and
 * check that the root then holds either no session or the whole one, and that the next write
 * removes what the killed writer left.
 */

const NODE = path.join(REPO, 'node_modules/.bin/node');
const WRITER = path.join(import.meta.dirname, 'helpers/session-writer.ts');
const ID = '20250106_020000';
const SIZE = 4_000_000;
const NAMES = ['exec_summary_acme.html', 'pipeline.log', 'report_acme.html', 'session_results.json'];

let work: string;
beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-session-atomic-'));
});
afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});
let n = 0;

interface Killed {
  root: string;
  /** The last line the writer printed before it died. */
  last: string;
}

/** Starts a writer; kills it when it prints `waitFor`, or `delayMs` after it is ready. */
function killWriter(opts: { stopAt?: string; delayMs?: number }): Promise<Killed> {
  const root = path.join(work, `root-${++n}`);
  const child = spawn(NODE, [WRITER, root, ID, opts.stopAt ?? '', String(SIZE)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (opts.stopAt !== undefined && out.includes(`${opts.stopAt}\n`)) child.kill('SIGKILL');
      if (opts.delayMs !== undefined && out === 'ready\n') setTimeout(() => child.kill('SIGKILL'), opts.delayMs);
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      const lines = out.trim().split('\n');
      if (opts.stopAt !== undefined && signal !== 'SIGKILL') reject(new Error(`writer was not killed: ${out}`));
      else resolve({ root, last: lines[lines.length - 1] ?? '' });
    });
  });
}

/** Either no session, or the whole one; returns which. */
function sessionState(root: string): 'none' | 'whole' {
  const ids = listSessionIds(root);
  const dirs = fs.existsSync(root) ? fs.readdirSync(root).filter((d) => !d.startsWith('.')) : [];
  if (ids.length === 0) {
    expect(dirs).toStrictEqual([]);
    return 'none';
  }
  expect(ids).toStrictEqual([ID]);
  expect(dirs).toStrictEqual([ID]);
  const dir = path.join(root, ID);
  expect(fs.readdirSync(dir).sort()).toStrictEqual(NAMES);
  for (const name of NAMES) expect(fs.statSync(path.join(dir, name)).size, name).toBe(SIZE);
  return 'whole';
}

describe('a writer killed during the write', () => {
  const before = [
    'temp-created',
    'file-written:session_results.json',
    'file-written:pipeline.log',
    'file-written:report_acme.html',
    'file-written:exec_summary_acme.html',
    'files-synced',
  ];

  it.each(before)('at %s leaves no session, and the next write cleans up after it', async (step) => {
    const { root } = await killWriter({ stopAt: step });
    expect(sessionState(root)).toBe('none');
    const leftovers = fs.readdirSync(root).filter((d) => d.startsWith('.tmp-'));
    expect(leftovers).toHaveLength(1);
    writeSessionDir(root, '20250107_020000', [{ name: 'pipeline.log', content: 'x' }]);
    expect(fs.readdirSync(root)).toStrictEqual(['20250107_020000']);
  });

  it.each(['renamed', 'root-synced'])('at %s leaves the whole session', async (step) => {
    const { root } = await killWriter({ stopAt: step });
    expect(sessionState(root)).toBe('whole');
  });

  it('at moments in between leaves either nothing or the whole session', async () => {
    const seen = new Set<string>();
    for (const delayMs of [0, 5, 20, 60, 150, 400]) {
      const { root, last } = await killWriter({ delayMs });
      const state = sessionState(root);
      seen.add(state);
      if (last === 'done') expect(state).toBe('whole');
    }
    // The delays span the write: some kills land before the rename.
    expect(seen.has('none')).toBe(true);
  });
});
