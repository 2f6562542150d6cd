import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isScannerSessionId } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimSessionId } from '../src/session-dir/claim.ts';
import { listSessionIds } from '../src/kit/session-dir/history.ts';

/** Session ids that never collide in one sessions root (docs/scanner/session-directory.md, "Session ids"). */

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-claim-'));
});
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const at = (iso: string) => new Date(iso);
const fresh = () => fs.mkdtempSync(path.join(root, 'r-'));

describe('claimSessionId', () => {
  it('takes the second the run started in when it is free, and the claim is invisible to listings', () => {
    const r = fresh();
    const c = claimSessionId(r, at('2025-03-01T12:00:00.900Z'));
    expect(c.id).toBe('20250301_120000');
    expect(fs.readdirSync(r)).toEqual(['.claim-20250301_120000']);
    expect(listSessionIds(r)).toEqual([]);
    c.release();
    c.release();
    expect(fs.readdirSync(r)).toEqual([]);
  });

  it('skips ids whose directory exists or another live run claimed, keeping the pattern across a day', () => {
    const r = fresh();
    fs.mkdirSync(path.join(r, '20250301_235959'));
    const held = claimSessionId(r, at('2025-03-01T23:59:59Z'));
    expect(held.id).toBe('20250302_000000');
    const next = claimSessionId(r, at('2025-03-01T23:59:59Z'));
    expect(next.id).toBe('20250302_000001');
    expect(isScannerSessionId(next.id)).toBe(true);
    held.release();
    next.release();
  });

  it("takes over a claim whose process is gone; leaves a live process's claim alone", () => {
    const r = fresh();
    const dead = spawnSync('/bin/true').pid;
    fs.writeFileSync(path.join(r, '.claim-20250301_120000'), `${dead}\n`);
    const live = process.ppid;
    fs.writeFileSync(path.join(r, '.claim-20250301_120001'), `${live}\n`);
    const c = claimSessionId(r, at('2025-03-01T12:00:00Z'));
    expect(c.id).toBe('20250301_120000');
    expect(fs.readFileSync(path.join(r, '.claim-20250301_120000'), 'utf8')).toBe(`${process.pid}\n`);
    const d = claimSessionId(r, at('2025-03-01T12:00:00Z'));
    expect(d.id).toBe('20250301_120002');
    c.release();
    d.release();
  });
});
