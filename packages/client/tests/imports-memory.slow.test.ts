import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, SVC, tempHome } from '@svc/test-support/cli';

/**
 * The review's hostile files, generated here into a temp dir, imported by a
 * real `svc import` process whose peak resident memory (getrusage's maxRSS, written by a preload
 * at exit) must stay under the figures docs/cli/import.md "Memory" states. Before the bounds:
 * a 40 MB pluginName peaked at 658 MB and wrote a 200 MB session, 3 million empty elements at
 * 1.0 GB, a 300 MB text node at 756 MB.
 */

/** docs/cli/import.md "Memory": a file whose findings are few, however large it or any field in it. */
const FEW_FINDINGS_RSS_MIB = 384;
/** docs/cli/import.md "Memory": any file the limits accept. */
const ANY_FILE_RSS_MIB = 1536;
const CUT = 64 * 1024;
const NOTE = `\n[cut at ${CUT} characters]`;
const MIB = 1024 * 1024;

let dir: string;
let preload: string;
beforeAll(async () => {
  dir = await tempHome();
  preload = path.join(dir, 'max-rss.mjs');
  fs.writeFileSync(
    preload,
    "import fs from 'node:fs';\nprocess.on('exit', () => fs.writeFileSync(process.env.SVC_TEST_RSS_FILE, String(process.resourceUsage().maxRSS)));\n",
  );
});
afterAll(async () => {
  await fs.promises.rm(dir, { recursive: true, force: true });
});

/** Writes a file from pieces, waiting for the disk (a 300 MB file never sits in memory). */
async function generate(name: string, pieces: Iterable<string>): Promise<string> {
  const file = path.join(dir, name);
  const out = fs.createWriteStream(file);
  for (const piece of pieces)
    if (!out.write(piece)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return file;
}

/** `times` copies of `unit`, in pieces of about 1 MiB. */
function* repeated(unit: string, times: number): Generator<string> {
  const per = Math.max(1, Math.floor(MIB / unit.length));
  const block = unit.repeat(per);
  for (let left = times; left > 0; left -= per) yield left >= per ? block : unit.repeat(left);
}

let runs = 0;
/** `svc import <file> --json` as a real process: its exit, output, peak RSS in MiB and session. */
async function importMeasured(file: string) {
  const n = ++runs;
  const rssFile = path.join(dir, `rss-${n}`);
  const sessions = path.join(dir, `sessions-${n}`);
  const r = await runCli(SVC, ['import', file, '--sessions-dir', sessions, '--target', 'lab', '--json'], {
    env: { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}`, SVC_TEST_RSS_FILE: rssFile },
    timeoutMs: 240_000,
  });
  expect(fs.existsSync(rssFile), `no maxRSS written: ${r.stderr}`).toBe(true);
  const rssMib = Number(fs.readFileSync(rssFile, 'utf8')) / 1024;
  if (process.env['SVC_TEST_SHOW_RSS'])
    process.stderr.write(`${path.basename(file)}: ${rssMib.toFixed(0)} MiB, exit ${r.code}\n`);
  const out = r.code === 0 ? (JSON.parse(r.stdout) as { path: string; checks: Record<string, number> }) : null;
  const files =
    out === null
      ? {}
      : Object.fromEntries(fs.readdirSync(out.path).map((f) => [f, fs.statSync(path.join(out.path, f)).size]));
  const findings =
    out === null
      ? []
      : (
          JSON.parse(fs.readFileSync(path.join(out.path, 'session_results.json'), 'utf8')) as {
            findings: { title: string; evidence?: string; host: string }[];
          }
        ).findings;
  return { ...r, rssMib, checks: out?.checks, files, findings };
}

const HOST = '<ReportHost name="192.0.2.10"><HostProperties><tag name="host-ip">192.0.2.10</tag></HostProperties>';
function* chain(...parts: Iterable<string>[]): Generator<string> {
  for (const part of parts) yield* part;
}
const nessusFile = (name: string, ...body: Iterable<string>[]) =>
  generate(
    name,
    chain(['<?xml version="1.0" ?>\n<NessusClientData_v2><Report name="r">'], ...body, [
      '</Report></NessusClientData_v2>\n',
    ]),
  );
const ITEM = '<ReportItem port="443" protocol="tcp" severity="2" pluginID="104743" pluginName=';

describe('svc import of hostile files: bounded memory, every kept text cut', () => {
  it('a Nessus file with a 40 MB pluginName attribute: imported with the title cut', async () => {
    const file = await nessusFile('attr.nessus', [HOST, `${ITEM}"`], repeated('P', 40 * MIB), [
      '"><plugin_output>seen</plugin_output></ReportItem></ReportHost>',
    ]);
    const r = await importMeasured(file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.findings.map((f) => f.title)).toEqual([`${'P'.repeat(CUT)}${NOTE}`]);
    expect(r.checks).toEqual({ invalid_hosts: 0, invalid_hostnames: 0, cut_fields: 1 });
    expect(r.stderr).toContain(`warning: fields cut at ${CUT} characters: 1`);
    // The title appears in the session, the report and the summary: each far below the 40 MB.
    for (const size of Object.values(r.files)) expect(size).toBeLessThan(MIB);
    expect(r.rssMib).toBeLessThan(FEW_FINDINGS_RSS_MIB);
  });

  it('Nuclei: a 40 MB info.name is refused by the line limit, a 15 MB one cut; a line of millions of objects refused', async () => {
    const line = (name: string, size: number) =>
      generate(
        name,
        chain(
          [
            '{"template-id":"tls-version","host":"https://192.0.2.10","ip":"192.0.2.10","info":{"severity":"medium","name":"',
          ],
          repeated('N', size),
          ['"}}\n'],
        ),
      );
    const bigFile = await line('big.jsonl', 40 * MIB);
    const big = await importMeasured(bigFile);
    expect(big.code).toBe(1);
    expect(big.stderr).toBe(`error: ${bigFile}: Refused: line 1 is longer than 16 MiB (not Nuclei JSON lines)\n`);
    expect(big.rssMib).toBeLessThan(FEW_FINDINGS_RSS_MIB);
    const cut = await importMeasured(await line('cut.jsonl', 15 * MIB));
    expect(cut.code, cut.stderr).toBe(0);
    expect(cut.findings.map((f) => f.title)).toEqual([`${'N'.repeat(CUT)}${NOTE}`]);
    expect(cut.rssMib).toBeLessThan(FEW_FINDINGS_RSS_MIB);
    // 16 MiB of `{},`: 5.5 million objects once parsed (655 MiB); refused before parsing.
    const objects = await generate(
      'objects.jsonl',
      chain(['{"template-id":"t","ip":"192.0.2.10","info":{"name":"n"},"x":['], repeated('{},', 5_500_000), ['{}]}\n']),
    );
    const values = await importMeasured(objects);
    expect(values.code).toBe(1);
    expect(values.stderr).toBe(
      `error: ${objects}: Refused: line 1 holds more than 100000 JSON values (not a Nuclei result)\n`,
    );
    expect(values.rssMib).toBeLessThan(FEW_FINDINGS_RSS_MIB);
  });

  it('3 million empty elements (12 MB): refused inside one item, read and dropped outside any', async () => {
    const inside = await nessusFile('inside.nessus', [HOST, `${ITEM}"x">`], repeated('<e/>', 3_000_000), [
      '</ReportItem></ReportHost>',
    ]);
    expect(fs.statSync(inside).size).toBeGreaterThan(12_000_000);
    const refused = await importMeasured(inside);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`error: ${inside}: Refused: one <ReportItem> holds more than 300000 elements\n`);
    expect(refused.rssMib).toBeLessThan(FEW_FINDINGS_RSS_MIB);
    const outside = await nessusFile('outside.nessus', repeated('<e/>', 3_000_000), [
      HOST,
      `${ITEM}"x"><plugin_output>seen</plugin_output></ReportItem></ReportHost>`,
    ]);
    const read = await importMeasured(outside);
    expect(read.code, read.stderr).toBe(0);
    expect(read.findings.map((f) => f.host)).toEqual(['192.0.2.10']);
    expect(read.rssMib).toBeLessThan(FEW_FINDINGS_RSS_MIB);
  });

  it('a 300 MB text node, within the 512 MiB size limit: read with the evidence cut as it arrives', async () => {
    const file = await nessusFile('text.nessus', [HOST, `${ITEM}"x"><plugin_output>`], repeated('B', 300 * MIB), [
      '</plugin_output></ReportItem></ReportHost>',
    ]);
    expect(fs.statSync(file).size).toBeGreaterThan(300 * MIB);
    expect(fs.statSync(file).size).toBeLessThan(512 * MIB);
    const r = await importMeasured(file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.findings.map((f) => f.evidence)).toEqual([`${'B'.repeat(CUT)}${NOTE}`]);
    expect(r.rssMib).toBeLessThan(FEW_FINDINGS_RSS_MIB);
    fs.rmSync(file);
  });

  it('hostile host names in a real import: the finding left out, the name dropped, the summary says so', async () => {
    const host = (name: string, fqdn: string) =>
      `<ReportHost name="${name}"><HostProperties><tag name="host-ip">${name}</tag><tag name="host-fqdn">${fqdn}</tag></HostProperties>${ITEM}"TLS 1.0"/></ReportHost>`;
    const file = await nessusFile('hosts.nessus', [
      host('192.0.2.10', '&lt;script&gt;alert(1)&lt;/script&gt;'),
      host('&lt;script&gt;', 'x.example'),
      host('two words', 'y.example'),
      host(`${'a'.repeat(300)}.example`, 'z.example'),
    ]);
    const r = await importMeasured(file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.findings.map((f) => f.host)).toEqual(['192.0.2.10']);
    expect(r.checks).toEqual({ invalid_hosts: 6, invalid_hostnames: 2, cut_fields: 0 });
    expect(r.stderr).toContain(
      'warning: findings or hosts left out for a host that is not an IP address or host name: 6; host names dropped for not being RFC 1123 host names: 2',
    );
  });

  it('refuses a file past the totals one import keeps: findings, hosts, characters of text', async () => {
    const lines = function* (count: number) {
      for (let i = 0; i < count; i++)
        yield `{"template-id":"t${i}","host":"https://192.0.2.10","ip":"192.0.2.10","info":{"severity":"low","name":"n"}}\n`;
    };
    const manyFile = await generate('many.jsonl', lines(50_001));
    const findings = await importMeasured(manyFile);
    expect(findings.stderr).toBe(
      `error: ${manyFile}: Refused: the file holds more than 50000 findings, more than one import keeps (split the scan)\n`,
    );
    const hosts = function* () {
      for (let h = 0; h <= 65_536; h++) yield `<ReportHost name="10.${h >> 16}.${(h >> 8) & 255}.${h & 255}"/>`;
    };
    const hostsFile = await nessusFile('many-hosts.nessus', hosts());
    const many = await importMeasured(hostsFile);
    expect(many.stderr).toBe(
      `error: ${hostsFile}: Refused: the file names more than 65536 hosts, more than one import keeps (split the scan)\n`,
    );
    const text = function* () {
      for (let i = 0; i < 1100; i++)
        yield `${ITEM.replace('pluginID="104743"', `pluginID="${i}"`)}"P"><plugin_output>${'O'.repeat(CUT)}</plugin_output></ReportItem>`;
    };
    const longFile = await nessusFile('long.nessus', [HOST], text(), ['</ReportHost>']);
    const long = await importMeasured(longFile);
    expect(long.stderr).toBe(
      `error: ${longFile}: Refused: the file's findings and hosts hold more than 64 Mi characters of text after each field's cut at ${CUT} (split the scan)\n`,
    );
    for (const r of [findings, many, long]) {
      expect(r.code).toBe(1);
      expect(r.rssMib).toBeLessThan(ANY_FILE_RSS_MIB);
    }
  });

  it('fields at the cut up to the text limit: imported under the bound for any file', async () => {
    // 1,000 findings of nearly 64 Ki characters: close to the 64 Mi characters one import keeps.
    const items = function* () {
      for (let i = 0; i < 1000; i++)
        yield `${ITEM.replace('pluginID="104743"', `pluginID="${i}"`)}"P${i}"><plugin_output>${'O'.repeat(CUT - 128)}</plugin_output></ReportItem>`;
    };
    const file = await nessusFile('full.nessus', [HOST], items(), ['</ReportHost>']);
    const r = await importMeasured(file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.findings).toHaveLength(1000);
    expect(r.rssMib).toBeLessThan(ANY_FILE_RSS_MIB);
  });
});
