import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tool } from './helpers/cli.ts';

/**
 * `--seed` output is a contract: demos and load tests rely on the same seed giving the same
 * files on every machine and in every release that does not mean to change them. Two digests
 * per case: the data (session_results.json and pipeline.log) and the HTML (report and executive
 * summary), so a change of the report's look re-pins only the second.
 */

const TOOL = tool('synthetic_collection.sh');

let work: string;
beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-synthetic-digest-'));
});
afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
});

/** sha256 over the generated files (data, then HTML), in directory and file name order, names included. */
async function digestOf(args: string[]): Promise<{ data: string; html: string }> {
  const cwd = await fs.mkdtemp(path.join(work, 'run-'));
  const res = await runCli(TOOL, [...args, '--json'], { cwd });
  expect(res.code, res.stderr).toBe(0);
  const dirs = (JSON.parse(res.stdout) as string[]).sort();
  const data = createHash('sha256');
  const html = createHash('sha256');
  for (const dir of dirs) {
    const names = (await fs.readdir(dir)).sort();
    expect(names.filter((n) => !n.endsWith('.html'))).toStrictEqual(['pipeline.log', 'session_results.json']);
    expect(names.filter((n) => n.endsWith('.html'))).toHaveLength(2);
    for (const name of names) {
      const hash = name.endsWith('.html') ? html : data;
      hash.update(`${path.basename(dir)}/${name}\n`);
      hash.update(await fs.readFile(path.join(dir, name)));
    }
  }
  return { data: data.digest('hex'), html: html.digest('hex') };
}

describe('synthetic_collection.sh --seed output is byte for byte stable', () => {
  it.each([
    [
      'one session of the defaults',
      ['--target', '192.168.1.0/24', '--seed', '1'],
      '246150da8be8d2b06a0a873c1fcb05903b243bacf9e8058feaf59aa7d549d3b1',
      'f4da525f31f979d1f1f8258f1026044d84241c130d1d8702329d15f3efb36655',
    ],
    [
      'worsening, exceptions, client id',
      [
        '--target',
        '10.20.0.0/24',
        '--sessions',
        '3',
        '--trend',
        'worsening',
        '--with-exceptions',
        '2',
        '--client-id',
        'acme',
        '--seed',
        '42',
      ],
      '01549c1d8d20ff7c589f04fe9a630d36a42c94da279ecdaeb6ee8fee0de2349c',
      'fa9495d28f57fcd846686f67fc0c441bd571da6dd69f0e2ad5f8581d3e125cff',
    ],
    [
      'improving over a week, another mix, many findings',
      [
        '--target',
        'example.org',
        '--sessions',
        '4',
        '--interval',
        '1d',
        '--trend',
        'improving',
        '--findings',
        '60',
        '--mix',
        'critical:5,high:15,medium:30,low:30,info:20',
        '--with-exceptions',
        '5',
        '--seed',
        '7',
      ],
      'c0b2a572a252aa927eb8b38fee7eee2cc20c391a1c13152822f59a5fa36f8935',
      'dae2d3516d994f5aa3fc5bb093e97754166c92d0ae05c4ea08de5a17197dbbb6',
    ],
  ])('%s', async (_name, args, data, html) => {
    expect(await digestOf(args)).toStrictEqual({ data, html });
  });
});
