import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { leftoverTemps, replaceFile, replaceFileSync } from '../src/node.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replace-file-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe.each([true, false])('durable: %s', (durable) => {
  it('replaces the content whole, sync and async, text and bytes, and leaves only the file', async () => {
    const file = path.join(dir, 'state.json');
    fs.writeFileSync(file, 'old content that is longer than the new one\n');
    replaceFileSync(file, '{"a":1}\n', { durable });
    expect(fs.readFileSync(file, 'utf8')).toBe('{"a":1}\n');
    await replaceFile(file, Buffer.from([0x1f, 0x8b, 0]), { durable });
    expect([...fs.readFileSync(file)]).toEqual([0x1f, 0x8b, 0]);
    await replaceFile(file, ['a,b\r\n', Buffer.from('1,2\r\n'), '3,4\r\n'], { durable });
    expect(fs.readFileSync(file, 'utf8')).toBe('a,b\r\n1,2\r\n3,4\r\n');
    expect(fs.readdirSync(dir)).toEqual(['state.json']);
  });

  it('creates a file that did not exist', async () => {
    replaceFileSync(path.join(dir, 'a'), 'x', { durable });
    await replaceFile(path.join(dir, 'b'), 'y', { durable });
    expect(fs.readdirSync(dir).sort()).toEqual(['a', 'b']);
    expect(fs.readFileSync(path.join(dir, 'b'), 'utf8')).toBe('y');
  });
});

describe('mode', () => {
  it('the new file has the mode asked for, whatever the old one had', async () => {
    const file = path.join(dir, 'license_cache.json');
    fs.writeFileSync(file, 'old', { mode: 0o644 });
    replaceFileSync(file, 'secret', { durable: false, mode: 0o600 });
    expect(modeOf(file)).toBe(0o600);
    await replaceFile(file, 'secret 2', { durable: true, mode: 0o600 });
    expect(modeOf(file)).toBe(0o600);
    replaceFileSync(file, '<html>', { durable: true, mode: 0o644 });
    expect(modeOf(file)).toBe(0o644);
  });

  it('a secret is mode 600 from creation: its temp file is, while the content is still coming', async () => {
    const file = path.join(dir, 'export.csv');
    let seen: number[] = [];
    async function* rows() {
      yield 'head\r\n';
      // The first row is written: the temp file exists, the rename has not happened.
      await new Promise((r) => setTimeout(r, 20));
      seen = leftoverTemps(file).map(modeOf);
      yield 'row\r\n';
    }
    await replaceFile(file, rows(), { durable: false, mode: 0o600 });
    expect(seen).toEqual([0o600]);
    expect(fs.readFileSync(file, 'utf8')).toBe('head\r\nrow\r\n');
  });
});

describe('failures leave the old file and no temp file', () => {
  it('a missing directory: the error, nothing created', async () => {
    const file = path.join(dir, 'missing', 'state.json');
    expect(() => replaceFileSync(file, 'x', { durable: true })).toThrow(/ENOENT/);
    await expect(replaceFile(file, 'x', { durable: true })).rejects.toThrow(/ENOENT/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a rename that fails (a directory in the way): the error, the temp file removed', async () => {
    const file = path.join(dir, 'taken');
    fs.mkdirSync(path.join(file, 'inside'), { recursive: true });
    expect(() => replaceFileSync(file, 'x', { durable: false })).toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    await expect(replaceFile(file, 'x', { durable: true })).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(fs.readdirSync(dir)).toEqual(['taken']);
    expect(fs.readdirSync(file)).toEqual(['inside']);
  });

  it('content that throws midway: the error, the old content kept', async () => {
    const file = path.join(dir, 'out.sarif');
    fs.writeFileSync(file, 'the old export');
    async function* broken() {
      yield 'x'.repeat(100_000);
      throw new Error('the session file ended early');
    }
    await expect(replaceFile(file, broken(), { durable: true, mode: 0o600 })).rejects.toThrow(
      'the session file ended early',
    );
    expect(fs.readFileSync(file, 'utf8')).toBe('the old export');
    expect(fs.readdirSync(dir)).toEqual(['out.sarif']);
  });
});

describe('concurrent writers', () => {
  const versions = Array.from({ length: 8 }, (_, i) => String.fromCharCode(97 + i).repeat(128 * 1024));

  it('async writers in one process each leave a whole file; a reader never sees part of one', async () => {
    const file = path.join(dir, 'index.json');
    fs.writeFileSync(file, versions[0]!);
    let writing = true;
    const reads: string[] = [];
    const reader = (async () => {
      while (writing) {
        reads.push(fs.readFileSync(file, 'utf8'));
        await new Promise((r) => setImmediate(r));
      }
    })();
    try {
      await Promise.all(
        Array.from({ length: 3 }, () =>
          Promise.all(versions.map((v, i) => replaceFile(file, v, { durable: i % 2 === 0, mode: 0o600 }))),
        ),
      );
    } finally {
      writing = false;
      await reader;
    }
    expect(reads.length).toBeGreaterThan(0);
    for (const r of reads) expect(versions).toContain(r);
    expect(versions).toContain(fs.readFileSync(file, 'utf8'));
    expect(fs.readdirSync(dir)).toEqual(['index.json']);
  });

  it('sync writers in threads of one process (one pid) each leave a whole file', async () => {
    const file = path.join(dir, 'status.json');
    const module = new URL('../src/replace-file.ts', import.meta.url).href;
    const code = `
      import { workerData } from 'node:worker_threads';
      import { replaceFileSync } from ${JSON.stringify(module)};
      for (let i = 0; i < 40; i++) replaceFileSync(workerData.file, workerData.text, { durable: false });`;
    const writers = versions.slice(0, 4).map(
      (text) =>
        new Promise<number>((resolve, reject) => {
          const w = new Worker(code, { eval: true, workerData: { file, text } });
          w.on('error', reject);
          w.on('exit', resolve);
        }),
    );
    expect(await Promise.all(writers)).toEqual([0, 0, 0, 0]);
    expect(versions.slice(0, 4)).toContain(fs.readFileSync(file, 'utf8'));
    expect(fs.readdirSync(dir)).toEqual(['status.json']);
  });
});

describe('leftoverTemps', () => {
  it("lists a killed writer's temp files of that file only", () => {
    const file = path.join(dir, 'journal.json');
    for (const name of [
      '.journal.json.4242-0123456789ab.tmp',
      '.journal.json.bak.4242-0123456789ab.tmp',
      '.journal.json.4242-short.tmp',
      'journal.json.tmp-4242',
      'journal.json',
    ])
      fs.writeFileSync(path.join(dir, name), '{"partial');
    expect(leftoverTemps(file)).toEqual([path.join(dir, '.journal.json.4242-0123456789ab.tmp')]);
    expect(leftoverTemps(path.join(dir, 'missing', 'journal.json'))).toEqual([]);
  });
});
