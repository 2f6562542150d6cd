import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VulnIndex } from '@svc/protocol';
import { runCli } from '@svc/test-support/cli';
import { createLicense } from '@svc/test-support/factories';
import { createTestDatabase, startTestPortal } from '@svc/test-support/portal';
import { epssCsv, FEED_FIXTURES, kevCatalog, nvdFeed, writeFeedFile } from '@svc/test-support/vuln-feeds';

/**
 * `npm run feeds:import` (docs/vuln-feeds.md): feed files into the database the portal's
 * configuration names (migrated first when needed), a summary on stdout, exit 2 with the
 * reason on stderr for anything wrong with the command or a file; replicas on that database
 * serve one and the same index.
 */

const CLI = path.resolve(import.meta.dirname, '../src/operations/vuln-feeds/cli.ts');
let dir: string;
let databaseUrl: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-feeds-'));
  // An empty database: the command migrates it, as the portal's first start would.
  databaseUrl = await createTestDatabase();
  env = { DATABASE_URL: databaseUrl, SVC_DATA_DIR: dir, SVC_LOG_LEVEL: 'silent' };
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

describe('npm run feeds:import', () => {
  it('imports NVD (two files, gzip and plain), KEV, EPSS and the Debian tracker and says what it imported', async () => {
    const yearly = await writeFeedFile(
      dir,
      'nvdcve-2.0-2023.json.gz',
      nvdFeed([
        {
          id: 'CVE-2023-38408',
          cvss: 9.8,
          cpes: [{ criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', endExcluding: '9.3p2' }],
        },
        { id: 'CVE-2023-0001', cvss: 5.3, cpes: [{ criteria: 'cpe:2.3:a:example:widget:1.0:*:*:*:*:*:*:*' }] },
      ]),
    );
    const modified = await writeFeedFile(
      dir,
      'nvdcve-2.0-modified.json',
      nvdFeed([{ id: 'CVE-2023-0001', cvss: 6.1, cpes: [{ criteria: 'cpe:2.3:a:example:widget:1.1:*:*:*:*:*:*:*' }] }]),
    );
    const kev = await writeFeedFile(
      dir,
      'known_exploited_vulnerabilities.json',
      kevCatalog([{ cve: 'CVE-2023-38408', dateAdded: '2024-01-02' }], { catalogVersion: '2026.11.26' }),
    );
    const epss = await writeFeedFile(
      dir,
      'epss_scores-2026-11-26.csv.gz',
      epssCsv([{ cve: 'CVE-2023-38408', epss: 0.5, percentile: 0.97 }], { scoreDate: '2026-11-26T00:00:00Z' }),
    );
    const res = await runCli(
      'npm',
      [
        'run',
        '--silent',
        'feeds:import',
        '--',
        '--nvd',
        yearly,
        modified,
        '--kev',
        kev,
        '--epss',
        epss,
        '--debian',
        path.join(FEED_FIXTURES, 'debian', 'openssh-tracker.json'),
      ],
      {
        env,
        timeoutMs: 120_000,
      },
    );
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(
      /^NVD: 3 records read from 2 files, 2 new or changed; 2 CVE records held\nKEV: 1 entries \(catalogue 2026\.11\.26\)\nEPSS: 1 scores \(score date 2026-11-26T00:00:00Z\)\nDebian: 1 source packages, 5 CVEs, 20 release statements\nindex [0-9a-f]{64} \(new\): 6 CVEs, 2 products, 2 ranges, 1 Debian packages, \d+ bytes compressed\n$/,
    );

    // Two replicas on that database serve the same index.
    const [a, b] = await Promise.all([startTestPortal({ databaseUrl }), startTestPortal({ databaseUrl })]);
    try {
      const { key } = await createLicense(a);
      const answers = await Promise.all(
        [a, b].map((p) => fetch(`${p.url}/api/vuln-index`, { headers: { 'x-api-key': key } })),
      );
      const version = /index ([0-9a-f]{64})/.exec(res.stdout)?.[1];
      expect(answers.map((r) => [r.status, r.headers.get('etag')])).toEqual([
        [200, `"${version}"`],
        [200, `"${version}"`],
      ]);
      const [ja, jb] = (await Promise.all(answers.map((r) => r.json()))) as VulnIndex[];
      expect(ja).toEqual(jb);
      expect(ja?.products['a:example:widget']).toEqual([{ cve: 1, version: '1.1' }]);
      expect(ja?.debian?.['openssh']?.cves.find((c) => ja.cves[c.cve]?.id === 'CVE-2023-38408')?.fixed).toEqual({
        bookworm: '1:9.2p1-2+deb12u1',
        bullseye: '1:8.4p1-5+deb11u2',
        sid: '1:9.3p2-1',
        trixie: '1:9.3p2-1',
      });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('reads a relative path from the directory it was run in, and imports one feed alone', async () => {
    await writeFeedFile(dir, 'kev-2.json', kevCatalog([{ cve: 'CVE-2023-0001', dateAdded: '2025-05-05' }]));
    const res = await runCli(process.execPath, [CLI, '--kev', 'kev-2.json'], { env: { ...env, INIT_CWD: dir } });
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(
      /^KEV: 1 entries \(catalogue 2026\.11\.26\)\nindex [0-9a-f]{64} \(new\): 6 CVEs, 2 products, 2 ranges, 1 Debian packages, \d+ bytes compressed\n$/,
    );
  });

  it.each([
    [[], 'nothing to import: give --nvd <file>..., --kev <file>, --epss <file> and/or --debian <file>\n'],
    [['--kev', 'missing.json'], `${'DIR'}/missing.json does not exist\n`],
    [
      ['--epss', 'kev-2.json'],
      `${'DIR'}/kev-2.json: line 1: expected the header "cve,epss,percentile"; not an EPSS CSV\n`,
    ],
    [['--nvd', 'kev-2.json'], `${'DIR'}/kev-2.json: vulnerabilities[0] has no "cve" object\n`],
    [
      ['--debian', 'kev-2.json'],
      `${'DIR'}/kev-2.json: "title" is not a package's CVE entries: not the Debian security tracker's JSON (https://security-tracker.debian.org/tracker/data/json)\n`,
    ],
  ])('refuses %j with exit 2 and the reason', async (args, message) => {
    const res = await runCli(process.execPath, [CLI, ...args], { env: { ...env, INIT_CWD: dir } });
    expect({ code: res.code, stderr: res.stderr, stdout: res.stdout }).toEqual({
      code: 2,
      stderr: message.replace('DIR', dir),
      stdout: '',
    });
  });

  it('refuses a NUL character in a CPE version with exit 2, naming where it is', async () => {
    const text = nvdFeed([
      { id: 'CVE-2024-0002', cpes: [{ criteria: 'cpe:2.3:a:acme:widget:1.0\u0000:*:*:*:*:*:*:*' }] },
    ]);
    const file = await writeFeedFile(dir, 'nvd-nul.json', text);
    const at = Buffer.byteLength(text.slice(0, text.indexOf('"cpe:2.3:a:acme')));
    const res = await runCli(process.execPath, [CLI, '--nvd', file], { env });
    expect({ code: res.code, stderr: res.stderr, stdout: res.stdout }).toEqual({
      code: 2,
      stderr: `${file}: a NUL character (U+0000) in the value of "criteria" at byte ${at}: no feed holds one; the file is refused\n`,
      stdout: '',
    });
  });
});
