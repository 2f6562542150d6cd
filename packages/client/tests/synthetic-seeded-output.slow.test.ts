import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tool } from '@svc/test-support/cli';

/**
 * `--seed` output is a contract: demos and load tests rely on the same seed giving the same
 * files on every machine and in every release that does not mean to change them. Two digests
 * per case: the data (session_results.json and pipeline.log) and the HTML (report and executive
 * summary), so a change of the report's look re-pins only the second. Re-pinned on purpose when
 * the score became bounded by the worst finding (docs/scoring.md) and compliance ids moved to
 * each framework's list (docs/compliance.md): scores, grades, compliance rows and the report
 * changed, and the worsening case's later sessions gained one critical each, because the
 * planner adds findings until the new score moves. The HTML re-pinned when the report gained
 * the known-exploited badge's style and the score formula's KEV and EPSS sentence (the data
 * digests did not move). The data re-pinned for the findings of record: each session
 * gained its coverage block, remediation entries `port`/`protocol`, resolved ones `resolved_at`,
 * metadata disposition_summary and the operational score in exception_summary; nothing else in
 * the documents moved (checked against the previous code), and the HTML digests did not move.
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
      'a82785009835e3ebc8e32cd6c21b3721afb08dbf08d5bc7c106e781c69003b5b',
      'a2e3c5615f9b90a30f82cbc7904fc7c3539e91cfc74297ec55d99456d5522644',
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
      '08b550eeae9cc39a5c94c7f966c0ed660b84940cd924d2f05400653b741859b0',
      '7568c17477919fab662e04fcca09f9ec6c673b2930f0bb9e270f6479b27f4bf2',
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
      '57c46b62d9066d8df3b0bb4698f8f6e93df717b5985686eb639addc667b628b6',
      '82509644ced11f7f402550eeb3858abec328d6e8053518f32d1bad2ae4c27643',
    ],
  ])('%s', async (_name, args, data, html) => {
    expect(await digestOf(args)).toStrictEqual({ data, html });
  });
});
