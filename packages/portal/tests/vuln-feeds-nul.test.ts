import fs from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { epssCsv, kevCatalog, nvdFeed } from '@svc/test-support/vuln-feeds';

/**
 * A NUL character (U+0000) anywhere in a feed file: PostgreSQL cannot store
 * one, and no publisher writes one, so the whole file is refused with a 400 naming where it is,
 * and nothing of that feed changes (docs/vuln-feeds.md#the-feeds-and-where-to-get-them). Never
 * a 500.
 */

const NVD_OK = nvdFeed([
  {
    id: 'CVE-2021-41773',
    cvss: 7.5,
    description: 'Path traversal in Apache HTTP Server 2.4.49.',
    cpes: [{ criteria: 'cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*' }],
  },
]);

/** The same feed with `what` replaced by `by` (as JSON text: `\\u0000` is the escape a JSON file holds). */
const with_ = (text: string, what: string, by: string) => {
  if (!text.includes(what)) throw new Error(`${what} is not in the feed`);
  return text.replace(what, by);
};

describe('POST /api/vuln-feeds/{feed} with a NUL character', () => {
  let portal: TestPortal;
  let token: string;
  const post = (feed: string, body: string | Buffer, type = 'application/json') =>
    fetch(`${portal.url}/api/vuln-feeds/${feed}`, {
      method: 'POST',
      headers: { 'x-identity-token': token, 'content-type': type },
      body,
    });
  /** What the feeds hold: unchanged by a refused file. */
  const held = async () =>
    (
      await portal.ctx.pool.query(
        `SELECT (SELECT count(*) FROM vuln_nvd_cves)::int AS cves, (SELECT count(*) FROM vuln_nvd_ranges)::int AS ranges,
           (SELECT count(*) FROM vuln_kev)::int AS kev, (SELECT count(*) FROM vuln_epss)::int AS epss,
           (SELECT count(*) FROM vuln_indexes)::int AS indexes,
           (SELECT json_agg(s ORDER BY feed) FROM vuln_feed_sources s) AS sources`,
      )
    ).rows[0];

  beforeAll(async () => {
    portal = await startTestPortal();
    token = await portal.adminToken();
    const first = await post('nvd', NVD_OK);
    expect(first.status, await first.clone().text()).toBe(200);
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it('NVD: a NUL in a CPE version, a version bound, a description or an unread field is a 400', async () => {
    const before = await held();
    const cases: [string, string][] = [
      ['CPE version', with_(NVD_OK, 'http_server:2.4.49:', 'http_server:2.4.49\\u0000:')],
      ['version bound', with_(NVD_OK, '"criteria"', '"versionEndExcluding":"2.4.50\\u0000","criteria"')],
      ['description', with_(NVD_OK, 'Path traversal', 'Path\\u0000traversal')],
      [
        'a field the index does not read',
        with_(NVD_OK, '"sourceIdentifier":"cve@mitre.org"', '"sourceIdentifier":"\\u0000"'),
      ],
      ['a key', with_(NVD_OK, '"vulnStatus"', '"vuln\\u0000Status"')],
    ];
    const answers = [];
    for (const [name, body] of cases) {
      for (const [how, bytes, type] of [
        ['plain', body, 'application/json'],
        ['gzip', gzipSync(body), 'application/gzip'],
      ] as const) {
        const res = await post('nvd', bytes, type);
        answers.push([`${name} (${how}): ${res.status}`, await res.json()]);
      }
    }
    expect(answers).toEqual(
      cases.flatMap(([name]) =>
        ['plain', 'gzip'].map((how) => [
          `${name} (${how}): 400`,
          {
            error: expect.stringMatching(
              /^nvd feed: a NUL character \(U\+0000\) in .* at byte \d+: no feed holds one; the file is refused$/,
            ),
          },
        ]),
      ),
    );
    expect(await held()).toEqual(before);
  });

  it('names the field and the byte where the NUL is', async () => {
    const body = with_(NVD_OK, 'http_server:2.4.49:', 'http_server:2.4.49\\u0000:');
    const res = await post('nvd', body);
    const at = Buffer.byteLength(body.slice(0, body.indexOf('"cpe:2.3:a:apache:http_server')));
    expect([res.status, await res.json()]).toEqual([
      400,
      {
        error: `nvd feed: a NUL character (U+0000) in the value of "criteria" at byte ${at}: no feed holds one; the file is refused`,
      },
    ]);
  });

  it('a raw NUL byte, which JSON never holds, is named as one with its byte', async () => {
    const body = with_(NVD_OK, 'Path traversal', 'Path\u0000traversal');
    const at = Buffer.byteLength(body.slice(0, body.indexOf('\u0000')));
    for (const [bytes, type] of [
      [body, 'application/json'],
      [gzipSync(body), 'application/gzip'],
    ] as const) {
      const res = await post('nvd', bytes, type);
      expect([res.status, await res.json()]).toEqual([
        400,
        { error: `nvd feed: a NUL character (U+0000) at byte ${at}: no feed holds one; the file is refused` },
      ]);
    }
  });

  it('KEV: a NUL in the description or the catalogue version is a 400', async () => {
    const before = await held();
    for (const body of [
      kevCatalog([{ cve: 'CVE-2021-41773', dateAdded: '2021-11-03', description: 'Apache\u0000 traversal' }]),
      kevCatalog([{ cve: 'CVE-2021-41773', dateAdded: '2021-11-03' }], { catalogVersion: '2026.11.26\u0000' }),
    ]) {
      const res = await post('kev', body);
      expect([res.status, await res.json()]).toEqual([
        400,
        {
          error: expect.stringMatching(
            /^kev feed: a NUL character \(U\+0000\) in the value of "\w+" at byte \d+: no feed holds one; the file is refused$/,
          ),
        },
      ]);
    }
    expect(await held()).toEqual(before);
  });

  it('EPSS: a NUL byte in the comment line or a row is a 400 naming the line', async () => {
    const before = await held();
    const ok = epssCsv([{ cve: 'CVE-2021-41773', epss: 0.9, percentile: 0.99 }], { scoreDate: '2026-11-26T00:00:00Z' });
    const lines = ok.split('\n');
    const comment = lines.findIndex((l) => l.startsWith('#'));
    const row = lines.findIndex((l) => l.startsWith('CVE-'));
    for (const [at, line] of [
      [comment, `${lines[comment]}\u0000`],
      [row, `${lines[row]}\u0000`],
    ] as const) {
      const body = lines.map((l, i) => (i === at ? line : l)).join('\n');
      const res = await post('epss', gzipSync(body), 'application/gzip');
      expect([res.status, await res.json()]).toEqual([
        400,
        { error: `epss feed: a NUL character (U+0000) on line ${at + 1}: no feed holds one; the file is refused` },
      ]);
    }
    expect(await held()).toEqual(before);
  });
});
