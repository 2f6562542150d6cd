import { gzipSync } from 'node:zlib';
import pino from 'pino';
import type { VulnIndex } from '@svc/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateTo } from '../src/db/migrate.ts';
import { openDatabase } from '../src/db/pool.ts';
import { createLicense } from '@svc/test-support/factories';
import { http, withKey } from '@svc/test-support/http';
import { createTestDatabase, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { untilValue } from '@svc/test-support/wait';

/**
 * Upgrading a portal whose feeds an older version imported (migration 0024, vuln-feeds/upgrade.ts):
 * the stored index of format 1 is never served to clients that read format 2; the portal builds
 * a format 2 index from the feeds held at start; the NVD ranges that read a CPE version "-" as
 * every version are gone, and the NVD records are marked to be read again on the next import.
 */

const portals: TestPortal[] = [];
afterAll(() => Promise.all(portals.map((p) => p.close())));

describe('a portal upgraded over feeds an older version imported', () => {
  it('rebuilds the index in its format at start, without the "-" ranges, and says to import NVD again', async () => {
    const databaseUrl = await createTestDatabase();
    const handle = openDatabase(databaseUrl, { max: 2, logger: pino({ level: 'silent' }) });
    try {
      await migrateTo(handle.db, '0023_command_progress');
      // What a portal before index format 2 stored of CVE-1999-0236 (cpe:2.3:a:apache:http_server:-:…,
      // read as every version) and CVE-2023-38408, and the index it built from them.
      await handle.pool.query(`
        INSERT INTO vuln_nvd_cves (cve_id, cvss, cvss_version, summary, digest) VALUES
          ('CVE-1999-0236', 7.5, '3.1', 'ScriptAlias directory in NCSA and Apache httpd allowed attackers to read CGI programs.', 'd1'),
          ('CVE-2023-38408', 9.8, '3.1', 'ssh-agent in OpenSSH before 9.3p2.', 'd2');
        INSERT INTO vuln_nvd_ranges (cve_id, product, version, start_including, start_excluding, end_including, end_excluding) VALUES
          ('CVE-1999-0236', 'a:apache:http_server', NULL, NULL, NULL, NULL, NULL),
          ('CVE-2023-38408', 'a:openbsd:openssh', NULL, NULL, NULL, NULL, '9.3'),
          ('CVE-2023-38408', 'a:openbsd:openssh', '9.3p1', NULL, NULL, NULL, NULL);
        INSERT INTO vuln_feed_sources (feed, records, detail, imported_at) VALUES ('nvd', 2, NULL, '2026-11-20T10:00:00Z');`);
      const old = { format: 1, version: 'old', cves: [], products: { 'a:apache:http_server': [{ cve: 0 }] } };
      await handle.pool.query(
        `INSERT INTO vuln_indexes (version, generated_at, cves, products, ranges, body) VALUES ('old', now(), 2, 2, 3, $1)`,
        [gzipSync(JSON.stringify(old))],
      );
    } finally {
      await handle.close();
    }

    const logs: { msg: string; records?: number; version?: string }[] = [];
    const portal = await startTestPortal({
      databaseUrl,
      env: { SVC_LOG_LEVEL: 'info' },
      logDestination: { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) },
    });
    portals.push(portal);
    const { key } = await createLicense(portal);
    // Until the rebuild is stored the portal answers 503 (clients keep their cached copy), never format 1.
    const index = await untilValue(async () => {
      const res = await http(portal.url, 'GET', '/api/vuln-index', { headers: withKey(key) });
      if (res.status === 503) return undefined;
      expect(res.status).toBe(200);
      return res.body as VulnIndex;
    }, 'the rebuilt index');
    expect(index.format).toBe(2);
    expect(index.cves.map((c) => c.id)).toEqual(['CVE-1999-0236', 'CVE-2023-38408']);
    expect(index.products).toEqual({
      'a:openbsd:openssh': [
        { cve: 1, end_excluding: '9.3' },
        { cve: 1, version: '9.3p1' },
      ],
    });
    expect(logs.map((l) => l.msg)).toContain("vulnerability index rebuilt in this portal's format");
    expect(logs.find((l) => l.msg.startsWith('NVD records were read by an older portal'))).toMatchObject({
      records: 2,
      msg: 'NVD records were read by an older portal: import the NVD files again to read their CPE versions and updates anew (docs/vuln-feeds.md#upgrading)',
    });
    const { rows } = await portal.ctx.pool.query<{ format: number }>('SELECT format FROM vuln_indexes ORDER BY seq');
    expect(rows.map((r) => r.format)).toEqual([1, 2]);
  });
});
